import type { Engine } from '../engines/types.js';

// The model gateway's bridge runs inside the agent's image (`node bridge.mjs -- <cli>`, in front of the
// CLI) on engines whose container sees the run folder: the image must have `node` on its PATH. An image
// without it fails each run before the CLI starts (Podman's init: "failed to exec pid1"), so readiness
// asks the engine to run `node --version` in the image once per image id, and a run that failed is
// checked the same way for its reason.

/** What the bridge needs the image to run. */
export const BRIDGE_PROBE: readonly string[] = ['node', '--version'];

/** Runs on this engine start the agent through the bridge inside its image (src/run/model-gateway.ts). */
export function bridgeInImage(engine: Pick<Engine, 'placement' | 'capabilities'>): boolean {
  return engine.placement === 'container' && engine.capabilities.bundleSockets === true;
}

/**
 * Why `image` cannot run the bridge on `engine`, with what to do, or undefined when it can (or the
 * engine cannot tell). Throws when the engine could not be asked.
 */
export async function bridgeImageProblem(
  engine: Pick<Engine, 'probeImage'>,
  image: string,
): Promise<string | undefined> {
  if (!engine.probeImage) return undefined;
  const probe = await engine.probeImage(image, BRIDGE_PROBE);
  if (probe.ok) return undefined;
  return (
    `the agent image ${image} has no node on its PATH; the model gateway's bridge needs it: build FROM ` +
    `runners/ (\`docker build -t ${image} runners/\`) or add node to the image (${BRIDGE_PROBE.join(' ')}: ${probe.detail})`
  );
}
