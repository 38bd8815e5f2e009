// kubectl's table layout and ages: text/tabwriter with kubectl's settings (minwidth 6, padding 3; the
// last column unpadded) and apimachinery's HumanDuration, so frozen tables read like live ones.

export interface TableOptions {
  minWidth?: number;
  padding?: number;
  noHeaders?: boolean;
}

/** Renders rows like kubectl's tabwriter; every line ends with a newline. */
export function renderTable(headers: string[], rows: string[][], options: TableOptions = {}): string {
  const minWidth = options.minWidth ?? 6;
  const padding = options.padding ?? 3;
  const all = options.noHeaders ? rows : [headers, ...rows];
  if (all.length === 0) return '';
  const columns = Math.max(...all.map((r) => r.length));
  const widths: number[] = [];
  for (let c = 0; c < columns - 1; c++) {
    const widest = Math.max(...all.map((r) => [...(r[c] ?? '')].length));
    widths.push(Math.max(minWidth, widest + padding));
  }
  return all
    .map((row) =>
      row
        .map((cell, c) => (c < columns - 1 ? cell + ' '.repeat((widths[c] ?? 0) - [...cell].length) : cell))
        .join('')
        .replace(/\s+$/, ''),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** apimachinery duration.HumanDuration: `45s`, `5m12s`, `17m`, `3h5m`, `20h`, `3d4h`, `41d`, `2y10d`. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24) % 365;
    const years = Math.floor(hours / 24 / 365);
    return days === 0 ? `${years}y` : `${years}y${days}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** The AGE of a timestamp at the cluster's frozen `now`; `<unknown>` when absent or unreadable. */
export function age(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const at = Date.parse(timestamp);
  return Number.isNaN(at) ? '<unknown>' : humanDuration(now - at);
}
