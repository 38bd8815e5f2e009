// The permission step before a container run (output/ and the bundle's agent-notes/ handed to the
// container user, the bundle left the daemon's) on the real file system: a link planted at
// output/, agent-notes/, the run's bundle folder or a folder above it must fail the step with the link
// named, leaving the victim folder's owner and mode as they were, both as root (chown) and as another
// user (chmod).
import { chmod, chown, mkdir, stat, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prepareWritable } from '../../../src/run/layout.js';
import { tempDir } from '../../support/runs.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir('triage-writable-')));
afterEach(async () => cleanup());

const RUN_ID = '20261123T000000Z-abcdef';
const CONTAINER_USER = '1000:1000';
const asRoot = () => 0;
const asUser = () => 4242;

/** A workspace with its folders: `<ws>/output`, `<ws>/.triage/runs/<id>`. */
function layout() {
  const workspace = path.join(dir, 'ws');
  return {
    workspace,
    output: path.join(workspace, 'output'),
    bundle: path.join(workspace, '.triage', 'runs', RUN_ID),
  };
}
const notesOf = (d: ReturnType<typeof layout>) => path.join(d.bundle, 'agent-notes');

/** A folder owned by root with mode 0750, as a victim elsewhere on the host would be. */
async function victimFolder(p: string): Promise<string> {
  await mkdir(p, { recursive: true });
  await chown(p, 0, 0);
  await chmod(p, 0o750);
  return p;
}

const ownerAndMode = async (p: string) => {
  const s = await stat(p);
  return { uid: s.uid, gid: s.gid, mode: (s.mode & 0o7777).toString(8) };
};

// Where the link goes, and which victim folder the step would have changed through it.
const plants: {
  at: string;
  link: (d: ReturnType<typeof layout>) => string;
  touched: (victim: string) => string;
}[] = [
  { at: 'output', link: (d) => d.output, touched: (v) => v },
  { at: "the bundle's agent-notes", link: notesOf, touched: (v) => v },
  { at: 'the run bundle folder', link: (d) => d.bundle, touched: (v) => v },
  { at: '.triage/runs', link: (d) => path.dirname(d.bundle), touched: (v) => path.join(v, RUN_ID) },
  {
    at: '.triage',
    link: (d) => path.join(d.workspace, '.triage'),
    touched: (v) => path.join(v, 'runs', RUN_ID),
  },
];

describe('prepareWritable with links planted in the workspace', () => {
  for (const [who, getuid] of [
    ['root (chown)', asRoot],
    ['another user (chmod)', asUser],
  ] as const) {
    it(`as ${who}, hands output/ and agent-notes/ to the container user and keeps the bundle the daemon's only`, async () => {
      const d = layout();
      await mkdir(d.workspace);
      await prepareWritable(d, 'container', CONTAINER_USER, getuid);
      const handed = (mode: string) =>
        getuid() === 0 ? { uid: 1000, gid: 1000, mode } : { uid: 0, gid: 0, mode: '777' };
      expect(await ownerAndMode(d.output)).toEqual(handed('755'));
      // Made under .triage/ (0700), then given to the agent, which alone writes it.
      expect(await ownerAndMode(notesOf(d))).toEqual(handed('700'));
      // Shared with the agent only once everything it reads is written (share-run.ts).
      expect(await ownerAndMode(d.bundle)).toEqual({ uid: 0, gid: 0, mode: '700' });
    });

    for (const plant of plants) {
      it(`as ${who}, refuses a link at ${plant.at} naming it and leaves the victim's owner and mode alone`, async () => {
        const d = layout();
        const victim = path.join(dir, 'victim');
        await victimFolder(plant.touched(victim));
        await mkdir(path.dirname(plant.link(d)), { recursive: true });
        await symlink(victim, plant.link(d));
        const before = await ownerAndMode(plant.touched(victim));
        await expect(prepareWritable(d, 'container', CONTAINER_USER, getuid)).rejects.toThrow(
          `${plant.link(d)} is a symbolic link; the daemon never writes through links in a workspace`,
        );
        expect(await ownerAndMode(plant.touched(victim))).toEqual(before);
        expect(before).toEqual({ uid: 0, gid: 0, mode: '750' });
      });
    }
  }
});
