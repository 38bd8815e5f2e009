// The docker engine: one hardened container per run through the Docker API, which Docker Engine and
// Podman (`podman system service`) both serve. The only place dockerode is used.
//   client.ts       where the engine is, the lazily loaded dockerode client, bounded calls, errors
//   socket-http.ts  the few GETs an idle daemon makes, straight over the socket
//   hardening.ts    the non-root user, the limits and the hardened HostConfig
//   scrub.ts        secrets taken out of engine errors
//   streams.ts      stdin through a hijacked attach, stdout/stderr demultiplexed
//   probe.ts        one-off probe containers: can an image run a command (the bridge's node)
//   engine.ts       the Engine: start, wait, signal, remove, list, attach

export { createDockerEngine, type DockerEngineOptions } from './engine.js';
export { dockerClient, dockerEndpoint } from './client.js';
export { assertNonRootUser, hardenedHostConfig, tmpfsOptions, type EngineFlavor } from './hardening.js';
export { scrubSecrets } from './scrub.js';
export { lightGet } from './socket-http.js';
