// Kubernetes resource quantities (`500m`, `2`, `256Mi`, `1G`) as numbers and back in the canonical
// form kubectl prints, for the node describe output's request and limit totals.

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The value of a quantity in base units (cores, bytes); NaN when unreadable. */
export function parseQuantity(text: unknown): number {
  if (typeof text === 'number') return text;
  if (typeof text !== 'string') return Number.NaN;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/.exec(text.trim());
  if (!m) return Number.NaN;
  const suffix = m[2] ?? '';
  const scale = BINARY[suffix] ?? DECIMAL[suffix] ?? 1;
  return Number(m[1]) * scale;
}

/** CPU in kubectl's canonical form: whole cores (`2`) or millicores (`1850m`). */
export function formatCpu(cores: number): string {
  const millis = Math.round(cores * 1000);
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

/** Bytes in the largest exact binary unit (`1536Mi`), else decimal (`500M`), else plain bytes. */
export function formatBytes(bytes: number): string {
  const b = Math.round(bytes);
  if (b === 0) return '0';
  for (const [suffix, scale] of Object.entries(BINARY).reverse())
    if (b % scale === 0) return `${b / scale}${suffix}`;
  for (const [suffix, scale] of [
    ['G', 1e9],
    ['M', 1e6],
    ['k', 1e3],
  ] as const)
    if (b % scale === 0) return `${b / scale}${suffix}`;
  return String(b);
}
