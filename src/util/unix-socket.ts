import { closeSync, constants as fsConstants, openSync } from 'node:fs';
import { chmod, chown, lstat, unlink } from 'node:fs/promises';
import type { Server } from 'node:net';
import path from 'node:path';

// Listening on a unix socket in a run folder: a stale socket a dead daemon left is replaced (anything
// else at the name is an error), a path too long for bind(2) is reached through its folder's
// descriptor, and the socket is opened to the user who must connect.

/** Linux's limit for a socket path is 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 100;

export interface SocketAccess {
  mode: number;
  owner?: { uid: number; gid: number };
}

export async function listenUnix(server: Server, socketPath: string, access: SocketAccess): Promise<void> {
  const info = await lstat(socketPath).catch(() => undefined);
  if (info && !info.isSocket())
    throw new Error(`${socketPath} exists and is not a socket; remove it and retry the run`);
  if (info) await unlink(socketPath);
  let bindPath = socketPath;
  let fd: number | undefined;
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    fd = openSync(path.dirname(socketPath), fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
    bindPath = `/proc/self/fd/${fd}/${path.basename(socketPath)}`;
  }
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(bindPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  await chmod(socketPath, access.mode);
  if (access.owner) await chown(socketPath, access.owner.uid, access.owner.gid);
}
