import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The daemon's image (Dockerfile) and the copy of the system prompt the kustomize base ships. Neither
// needs a renderer: deploy/kubernetes itself is checked with the real kubectl kustomize in
// test/integration/deploy/.

const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('the daemon image (Dockerfile)', () => {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('builds in a separate stage and installs only production dependencies in the runtime stage', () => {
    expect(dockerfile).toMatch(/FROM \$\{NODE_IMAGE\} AS build[\s\S]*RUN npm run build/);
    expect(runtime).toContain('npm ci --omit=dev');
    expect(runtime).toContain('COPY --from=build /src/dist/ dist/');
    expect(runtime).toMatch(/COPY configs\/ configs\/\nCOPY runners\/ runners\//);
  });

  it('runs as uid 10001, keeps writable state under /var/lib/triage-runner and checks /healthz with node', () => {
    expect(runtime).toContain('USER 10001:10001');
    expect(runtime).toContain('VOLUME ["/var/lib/triage-runner"]');
    expect(runtime).toMatch(/SKILLS_CACHE_DIR=\/var\/lib\/triage-runner\/skills/);
    expect(runtime).toMatch(/TRIAGE_RUNNER_WORKSPACES_ROOT=\/var\/lib\/triage-runner\/workspaces/);
    expect(runtime).toMatch(/HEALTHCHECK[\s\S]*CMD \["node", "-e", "fetch\(.*\/healthz/);
    expect(runtime).toContain('ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/dist/cli/main.js"]');
    expect(runtime).toContain('CMD ["daemon", "--create-root"]');
  });

  it('verifies the pinned kubectl download against a sha256', () => {
    expect(dockerfile).toMatch(/ARG KUBECTL_VERSION=v\d+\.\d+\.\d+/);
    expect(dockerfile).toMatch(/sha256sum -c -/);
  });

  it('keeps secrets, git history and dependencies out of the build context', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['.git', 'node_modules', 'dist', '.env', 'agent-home', 'test'])
      expect(ignored).toContain(entry);
  });
});

describe('deploy/kubernetes/base/config', () => {
  it('ships the same system prompt as configs/ (kustomize cannot read outside its folder, so it is a copy)', () => {
    const shipped = readFileSync(path.join(ROOT, 'configs/triage-system-prompt.md'), 'utf8');
    const copy = readFileSync(
      path.join(ROOT, 'deploy/kubernetes/base/config/triage-system-prompt.md'),
      'utf8',
    );
    expect(copy).toBe(shipped);
  });
});
