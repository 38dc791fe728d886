/**
 * Where a doc named `docs/x.md` is on this box: beside the package (npm),
 * under /usr/share/doc (the .deb, gzipped), or, when neither is there, the
 * path in the repository.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DEB_DOCS = '/usr/share/doc/agyctl/docs';

function packageDocs(): string | undefined {
  try {
    const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs');
    return fs.existsSync(path.join(dir, 'exit-codes.md')) ? dir : undefined;
  } catch {
    return undefined; // a bundle without a file URL
  }
}

/** Every `docs/<name>.md` in `text` replaced by the path a reader on this box can open. */
export function docsOnThisBox(text: string): string {
  const beside = packageDocs();
  return text.replace(/\bdocs\/([a-z0-9-]+\.md)\b/g, (whole, name: string) => {
    if (beside && fs.existsSync(path.join(beside, name))) return path.join(beside, name);
    if (fs.existsSync(path.join(DEB_DOCS, `${name}.gz`))) return path.join(DEB_DOCS, `${name}.gz`);
    return whole;
  });
}
