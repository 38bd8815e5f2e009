import { randomBytes } from 'node:crypto';
import { open, rename, unlink, mkdir } from 'node:fs/promises';
import path from 'node:path';

/** Writes a file so that readers see the old or the new content, never a mix: temp file, fsync, rename, fsync dir. */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  mode = 0o644,
  { createDir = true }: { createDir?: boolean } = {},
): Promise<void> {
  const dir = path.dirname(file);
  // Without createDir, a folder removed meanwhile (a deleted workspace) fails the write with ENOENT
  // instead of being made again.
  if (createDir) await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  await writeNewFileSynced(tmp, data, mode);
  try {
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dir);
}

/** Creates `file` exclusively (EEXIST when it exists), writes `data` and fsyncs it. */
export async function writeNewFileSynced(
  file: string,
  data: string | Uint8Array,
  mode = 0o644,
): Promise<void> {
  const handle = await open(file, 'wx', mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes a rename or create in `dir` durable. Some filesystems refuse to fsync a directory; that is not fatal. */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // EISDIR/EINVAL/EPERM on some platforms and network filesystems.
  } finally {
    await handle?.close();
  }
}
