import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ignoredPath } from '../../../src/intake/watcher.js';

const root = '/srv/incidents';
const p = (...parts: string[]) => path.join(root, ...parts);

describe('ignoredPath', () => {
  it('watches the root, workspace folders and their incident.json', () => {
    expect(ignoredPath(root, root)).toBe(false);
    expect(ignoredPath(root, p('inc-1'))).toBe(false);
    expect(ignoredPath(root, p('inc-1', 'incident.json'))).toBe(false);
  });

  it("ignores the daemon's .triage/, dotfiles and editor or download temp files", () => {
    expect(ignoredPath(root, p('inc-1', '.triage'))).toBe(true);
    expect(ignoredPath(root, p('.triage'))).toBe(true);
    expect(ignoredPath(root, p('.hidden'))).toBe(true);
    for (const temp of [
      'incident.json.tmp',
      'incident.json~',
      '.#incident.json',
      '.incident.json.swp',
      'incident.json.part',
    ]) {
      expect(ignoredPath(root, p('inc-1', temp)), temp).toBe(true);
    }
    expect(ignoredPath(root, p('upload.part'))).toBe(true);
  });

  it('ignores everything deeper than a folder and every other file in it', () => {
    expect(ignoredPath(root, p('inc-1', 'output'))).toBe(true);
    expect(ignoredPath(root, p('inc-1', 'output', 'investigation.md'))).toBe(true);
    expect(ignoredPath(root, p('inc-1', 'incident_cluster_permissions.json'))).toBe(true);
  });
});
