/** A uid as a user name, for `settings show`; undefined when unknown (no lookup is worth failing for). */
import fs from 'node:fs';
import os from 'node:os';

export function ownerName(uid: number): string | undefined {
  try {
    const me = os.userInfo();
    if (me.uid === uid) return me.username;
  } catch {
    /* no passwd entry for the current user (containers): fall through */
  }
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && id === String(uid)) return name;
    }
  } catch {
    /* no /etc/passwd */
  }
  return undefined;
}
