import {
  BootError,
  SUBJECT_PREFIX,
  type BootItem,
  type BootPlan,
  type BootSpec,
  type Collection,
  type Placement,
} from './boot.js';

// Resolving a boot spec into placements: which items are said, referenced, "as mentioned earlier",
// in the `also` section, or omitted, for the subjects being booted.

export interface ResolveBootOptions {
  /** Subjects to boot; undefined = all (subject mode). */
  subjects?: string[];
}

/**
 * Places every brief and skill per the boot spec. Items are placed in the given order (callers sort
 * them). Throws BootError for subjects in a file that is not in subject mode and for unknown subjects.
 */
export function resolveBoot(spec: BootSpec, items: BootItem[], opts: ResolveBootOptions = {}): BootPlan {
  if (spec.mode !== 'subject') {
    if (opts.subjects !== undefined) {
      const where =
        spec.mode === 'none' ? `there is no boot file at ${spec.file}` : `${spec.file} is in simple mode`;
      throw new BootError(
        `usecase requires subject mode: subjects [${opts.subjects.join(', ')}] were requested but ${where}; ` +
          'add always:/subject.<slug>: sections to the boot file or drop the subjects',
      );
    }
    const placements = items.map((item): Placement => {
      const cur = spec.mode === 'simple' ? spec[item.kind === 'brief' ? 'briefs' : 'skills'] : undefined;
      const said = !cur?.say || cur.say.matches(...item.candidates);
      return { id: item.id, kind: item.kind, how: said ? 'say' : 'ref', section: 'all' };
    });
    return { mode: spec.mode, subjects: [], allSubjects: false, placements };
  }

  const known = spec.subjects.map((s) => s.slug);
  const requested = opts.subjects === undefined ? undefined : [...new Set(opts.subjects)];
  for (const s of requested ?? []) {
    if (!known.includes(s)) {
      throw new BootError(
        `subject not found: ${s} (known: ${known.join(', ') || 'none'}) in ${spec.file}; ` +
          'pick a known subject or add a subject.' +
          `${s}: section`,
      );
    }
  }
  const booted = requested ?? known;
  const sections: { name: string; collection: Collection }[] = [
    { name: 'always', collection: spec.always ?? {} },
    ...booted.map((slug) => ({
      name: `${SUBJECT_PREFIX}${slug}`,
      collection: spec.subjects.find((s) => s.slug === slug)?.collection ?? {},
    })),
  ];

  const placements: Placement[] = [];
  const everySection = [spec.always, ...spec.subjects.map((s) => s.collection)];
  for (const kind of ['brief', 'skill'] as const) {
    const key = kind === 'brief' ? 'briefs' : 'skills';
    const ofKind = items.filter((i) => i.kind === kind);
    // Skills are curated only by `skills` say/ref lists: a boot file without any leaves every skill at
    // its default, indexed (Level 1), whichever subjects boot.
    if (kind === 'skill' && !everySection.some((c) => c?.skills?.say ?? c?.skills?.ref)) {
      for (const item of ofKind) placements.push({ id: item.id, kind, how: 'ref', section: 'all' });
      continue;
    }
    const saidIn = new Map<string, string>();
    const reffed = new Set<string>();
    for (const section of sections) {
      const cur = section.collection[key];
      for (const item of ofKind) {
        const say = cur?.say?.matches(...item.candidates) ?? false;
        const ref = !say && (cur?.ref?.matches(...item.candidates) ?? false);
        if (!say && !ref) continue;
        const earlier = saidIn.get(item.id);
        if (earlier !== undefined) {
          placements.push({ id: item.id, kind, how: 'mentioned', section: section.name, earlier });
        } else if (say) {
          saidIn.set(item.id, section.name);
          placements.push({ id: item.id, kind, how: 'say', section: section.name });
        } else if (!reffed.has(item.id)) {
          reffed.add(item.id);
          placements.push({ id: item.id, kind, how: 'ref', section: section.name });
        }
      }
    }
    if (requested !== undefined) continue; // specific subjects: unmatched items are omitted entirely
    const everyCuration = everySection.map((c) => c?.[key]);
    for (const item of ofKind) {
      const matched = everyCuration.some(
        (c) =>
          (c?.say?.matches(...item.candidates) ?? false) || (c?.ref?.matches(...item.candidates) ?? false),
      );
      if (!matched) placements.push({ id: item.id, kind, how: 'ref', section: 'also' });
    }
  }
  return { mode: 'subject', subjects: booted, allSubjects: requested === undefined, placements };
}
