/**
 * The hosts of `agyctl connect --inventory FILE [--limit PATTERN]`. With
 * Ansible installed, Ansible reads the inventory (`ansible-inventory --list`
 * for hosts and their connection variables, `ansible PATTERN --list-hosts`
 * for --limit), so every format and pattern Ansible knows works and agyctl
 * parses none of them. Without Ansible, a plain file of one destination per
 * line (# comments) works, and --limit takes comma-separated globs.
 *
 * Everything read here is untrusted: destinations and the ssh settings made
 * from host variables are validated like command-line ones.
 */
import fs from 'node:fs';
import { execa } from 'execa';
import { serverText } from '../acp/redact.js';
import { AgyError, EXIT, usageError } from '../core/errors.js';
import { validateDestination, validateSshOption } from './remote-command.js';

export interface ConnectTarget {
  /** The inventory name (or the destination as given), redacted and without control characters: what the summary shows. */
  name: string;
  destination: string;
  /** ssh settings for this host only (from ansible_user, ansible_port, ansible_ssh_private_key_file). */
  sshOptions: string[];
}

const ANSIBLE_TIMEOUT_MS = 30_000;

type HostVars = Record<string, unknown>;

export function targetsFromArgs(destinations: readonly string[]): ConnectTarget[] {
  return destinations.map((d) => {
    const destination = validateDestination(d);
    return { name: destination, destination, sshOptions: [] };
  });
}

export async function readInventory(
  file: string,
  limit: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<ConnectTarget[]> {
  if (!fs.existsSync(file))
    throw usageError(
      `--inventory ${file} does not exist.`,
      'pass an Ansible inventory, or a file with one host per line',
    );
  const inventory = await ansibleInventory(file, env);
  if (inventory === undefined) return plainInventory(file, limit);
  let names = inventory.names;
  if (limit !== undefined) {
    const chosen = new Set(await ansibleListHosts(file, limit, env));
    names = names.filter((n) => chosen.has(n));
  }
  if (names.length === 0)
    throw usageError(
      `--inventory ${file}${limit === undefined ? '' : ` --limit ${limit}`} selects no hosts.`,
      'check the pattern against `ansible-inventory -i FILE --graph`',
    );
  return names.map((name) => fromHostVars(name, inventory.hostvars[name] ?? {}));
}

/** undefined when ansible-inventory is not installed. */
async function ansibleInventory(
  file: string,
  env: NodeJS.ProcessEnv,
): Promise<{ names: string[]; hostvars: Record<string, HostVars> } | undefined> {
  const r = await execa('ansible-inventory', ['-i', file, '--list'], {
    env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: ANSIBLE_TIMEOUT_MS,
  });
  if (
    (r as { code?: string }).code === 'ENOENT' ||
    r.exitCode === 127 ||
    (r.failed && r.exitCode === undefined && !r.timedOut)
  )
    return undefined;
  if (r.exitCode !== 0)
    throw usageError(
      `ansible-inventory could not read ${file}: ${lastLines(String(r.stderr))}`,
      'check the file with `ansible-inventory -i FILE --graph`',
    );
  let doc: Record<string, { hosts?: unknown; children?: unknown; hostvars?: unknown }>;
  try {
    doc = JSON.parse(String(r.stdout)) as typeof doc;
  } catch {
    throw new AgyError(EXIT.usage, 'usage', `ansible-inventory printed no JSON for ${file}.`);
  }
  const names: string[] = [];
  const seen = new Set<string>();
  const visit = (group: string, depth: number): void => {
    const g = doc[group];
    if (!g || depth > 50) return;
    for (const h of Array.isArray(g.hosts) ? g.hosts : []) {
      if (typeof h === 'string' && !seen.has(h)) {
        seen.add(h);
        names.push(h);
      }
    }
    for (const c of Array.isArray(g.children) ? g.children : []) if (typeof c === 'string') visit(c, depth + 1);
  };
  visit('all', 0);
  const meta = (doc._meta as { hostvars?: Record<string, HostVars> } | undefined)?.hostvars ?? {};
  return { names, hostvars: meta };
}

/** Ansible's own pattern matching (groups, globs, regexes, !, &): the host names --limit selects. */
async function ansibleListHosts(file: string, limit: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const r = await execa('ansible', ['-i', file, '--list-hosts', '--', limit], {
    env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: ANSIBLE_TIMEOUT_MS,
  });
  if (r.exitCode !== 0)
    throw usageError(`--limit ${limit}: ansible could not match it in ${file}: ${lastLines(String(r.stderr))}`);
  return String(r.stdout)
    .split('\n')
    .slice(1) // "  hosts (N):"
    .map((l) => l.trim())
    .filter(Boolean);
}

/** ansible_host / ansible_user / ansible_port / ansible_ssh_private_key_file, as ssh settings (the way Ansible connects). */
function fromHostVars(inventoryName: string, vars: HostVars): ConnectTarget {
  // A dynamic inventory's names come from elsewhere (a cloud API, a CMDB): shown only once made safe.
  const name = safeLine(inventoryName);
  const str = (v: unknown): string | undefined =>
    typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
  const destination = validateDestination(str(vars.ansible_host) ?? inventoryName);
  const sshOptions: string[] = [];
  const user = str(vars.ansible_user ?? vars.ansible_ssh_user);
  if (user !== undefined) {
    if (!/^[A-Za-z0-9._][A-Za-z0-9._-]*$/.test(user))
      throw usageError(`inventory host ${name}: ansible_user ${safeLine(JSON.stringify(user))} is not a user name.`);
    sshOptions.push(`User=${user}`);
  }
  const port = str(vars.ansible_port ?? vars.ansible_ssh_port);
  if (port !== undefined) {
    if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)
      throw usageError(`inventory host ${name}: ansible_port ${safeLine(JSON.stringify(port))} is not a port.`);
    sshOptions.push(`Port=${port}`);
  }
  const key = str(vars.ansible_ssh_private_key_file ?? vars.ansible_private_key_file);
  if (key !== undefined) {
    if (/[\n\r"]/.test(key))
      throw usageError(`inventory host ${name}: ansible_ssh_private_key_file is not a usable path.`);
    sshOptions.push(validateSshOption(/\s/.test(key) ? `IdentityFile="${key}"` : `IdentityFile=${key}`));
  }
  return { name, destination, sshOptions };
}

function plainInventory(file: string, limit: string | undefined): ConnectTarget[] {
  const lines = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter(Boolean);
  for (const line of lines) {
    if (line.startsWith('[') || line.endsWith(':') || /[=\s]/.test(line)) {
      throw usageError(
        `--inventory ${file} is not a plain list of hosts (line ${JSON.stringify(line)}), and Ansible is not installed to read it.`,
        'install ansible-core (ansible-inventory), or write one host per line',
      );
    }
  }
  const patterns = limit
    ?.split(/[,:]/)
    .map((p) => p.trim())
    .filter(Boolean);
  const chosen = patterns === undefined ? lines : lines.filter((l) => patterns.some((p) => globMatch(p, l)));
  if (chosen.length === 0)
    throw usageError(`--inventory ${file}${limit === undefined ? '' : ` --limit ${limit}`} selects no hosts.`);
  return targetsFromArgs(chosen);
}

function globMatch(pattern: string, text: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return re.test(text);
}

const safeLine = (text: string): string => serverText(text, { singleLine: true });

function lastLines(text: string): string {
  return safeLine(text.trim().split('\n').slice(-3).join(' ').trim()) || 'no message';
}
