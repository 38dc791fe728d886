#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: agyctl maintainers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
# SPDX-License-Identifier: Apache-2.0
# agyctl_textfile_info: which directories node_exporter's textfile collector
# reads on this host, so agyctl's metrics go where they are scraped. Reads
# only; agyctl itself is not involved.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: agyctl_textfile_info
author: agyctl maintainers (@agyctl)
short_description: Find the directory node_exporter's textfile collector reads
description:
  - Looks for node_exporter (C(node_exporter) or Debian's C(prometheus-node-exporter)) on the host and reports the
    C(--collector.textfile.directory) each one reads. Reads only; nothing found is ever executed.
  - Only readers root may believe count. A process counts when root or one of C(service_users) runs it and its
    executable, and every directory above it, is owned by root and writable by no one else. A unit counts when the
    unit file, its C(EnvironmentFile=) and its binary pass the same test. Others are listed in C(ignored).
  - Running processes are read first (their command line). When none counts, the systemd units named like
    C(*node*exporter*.service) are read (C(ExecStart=), with C($VAR) taken from their C(EnvironmentFile=), e.g. the C(ARGS)
    of C(/etc/default/prometheus-node-exporter)). Without the flag, the package's default applies (Debian's
    C(/usr/bin/prometheus-node-exporter) reads C(/var/lib/prometheus/node-exporter); upstream's binary reads none).
    Drop-in overrides of the units are not read.
  - A collector switched off with C(--no-collector.textfile) reads nothing.
  - Without C(path), readers that disagree fail the task, naming C(agyctl_textfile_dir); the module does not guess.
options:
  path:
    description: The directory the caller would write; C(reads) then says whether any collector found reads it.
    type: path
  service_users:
    description: The accounts node_exporter runs as, besides root (Debian's package runs it as C(prometheus)).
    type: list
    elements: str
    default: [prometheus]
notes:
  - Supports check mode; it only reads.
'''

EXAMPLES = r'''
- agyctl.fleet.agyctl_textfile_info:
  register: textfile
- ansible.builtin.debug:
    msg: "node_exporter reads {{ textfile.directories }}"
'''

RETURN = r'''
directories:
  description: The distinct textfile directories the collectors found read, in the order found.
  returned: always
  type: list
  elements: str
readers:
  description: Each node_exporter found, where it was found (C(process PID), C(unit FILE)), and the directory it reads (empty when none).
  returned: always
  type: list
  elements: dict
ignored:
  description: Each node_exporter found but not believed, where it was found and why (C(run by uid 1001 ...), C(... is owned by uid 1001, not root)).
  returned: always
  type: list
  elements: dict
summary:
  description: The readers (and the ignored ones) in one line, for messages (C(process 31 reads /var/lib/prometheus/node-exporter)).
  returned: always
  type: str
reads:
  description: Whether a collector found reads C(path) (only when C(path) is given).
  returned: when path is given
  type: bool
'''

import glob
import os
import pwd
import re
import shlex
import stat

from ansible.module_utils.basic import AnsibleModule

NAMES = ('node_exporter', 'prometheus-node-exporter')
FLAG = '--collector.textfile.directory'
UNIT_DIRS = ('/etc/systemd/system', '/run/systemd/system', '/lib/systemd/system', '/usr/lib/systemd/system')
# The directory a packaged binary reads without the flag, as its package built it (Debian patches one in;
# upstream's default is none). Known from the package, never learnt by running the binary.
PACKAGE_DEFAULTS = {
    '/usr/bin/prometheus-node-exporter': '/var/lib/prometheus/node-exporter',
    '/usr/sbin/prometheus-node-exporter': '/var/lib/prometheus/node-exporter',
}


def untrusted_reason(path, want_file):
    """Why root should not believe `path` (None when root owns it and every directory above it, none writable by others)."""
    if not os.path.isabs(path):
        return '%s is not an absolute path' % path
    real = os.path.realpath(path)
    current = real
    while True:
        try:
            st = os.lstat(current)
        except OSError as e:
            return 'cannot stat %s (%s)' % (current, e.strerror)
        if st.st_uid != 0:
            return '%s is owned by uid %d, not root' % (current, st.st_uid)
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return '%s is writable by others (mode %04o)' % (current, stat.S_IMODE(st.st_mode))
        if current == real and want_file and not stat.S_ISREG(st.st_mode):
            return '%s is not a regular file' % current
        if current == '/':
            return None
        current = os.path.dirname(current)


def service_uids(names):
    uids = set([0])
    for name in names:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            pass
    return uids


def textfile_flag(argv):
    """(directory or None when the flag is absent, whether the collector is switched off)."""
    found, off = None, False
    for i, arg in enumerate(argv):
        if arg.startswith(FLAG + '='):
            found = arg.split('=', 1)[1]
        elif arg == FLAG and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg == '--no-collector.textfile':
            off = True
    return found, off


def reader(source, argv):
    found, off = textfile_flag(argv[1:])
    if off:
        directory = ''
    elif found is not None:
        directory = found
    else:
        directory = PACKAGE_DEFAULTS.get(argv[0], '')
    return dict(source=source, binary=argv[0], directory=directory.rstrip('/') or directory)


def read_at(dir_fd, name):
    fd = os.open(name, os.O_RDONLY, dir_fd=dir_fd)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b''.join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def process_uids(status):
    m = re.search(br'^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)', status, re.M)
    return set(int(u) for u in m.groups()) if m else set([-1])


def inspect_process(pid, uids):
    """(reader, None) for a node_exporter root may believe, (None, ignored entry) for another, (None, None) otherwise."""
    # One descriptor for the whole read: should the process end, its pid cannot hand us another's files.
    dir_fd = os.open('/proc/%s' % pid, os.O_RDONLY | os.O_DIRECTORY)
    try:
        exe = os.readlink('exe', dir_fd=dir_fd)
        if os.path.basename(exe.replace(' (deleted)', '')) not in NAMES:
            return None, None
        argv = [a.decode('utf-8', 'replace') for a in read_at(dir_fd, 'cmdline').split(b'\0') if a]
        owners = process_uids(read_at(dir_fd, 'status'))
    finally:
        os.close(dir_fd)
    source = 'process %s' % pid
    if not owners <= uids:
        why = 'run by uid %s, neither root nor the exporter\'s service user' % ','.join(str(u) for u in sorted(owners))
    else:
        why = untrusted_reason(exe, True) if not exe.endswith(' (deleted)') else '%s was replaced' % exe
    if why:
        return None, dict(source=source, binary=exe, reason=why)
    return reader(source, [exe] + argv[1:]), None


def running(uids):
    readers, ignored = [], []
    for entry in sorted(glob.glob('/proc/[0-9]*'), key=lambda p: int(p.split('/')[2])):
        try:
            found, skipped = inspect_process(entry.split('/')[2], uids)
        except (IOError, OSError):
            continue
        if found:
            readers.append(found)
        if skipped:
            ignored.append(skipped)
    return readers, ignored


def env_file(path):
    env = {}
    optional = path.startswith('-')
    path = path.lstrip('-')
    why = untrusted_reason(path, True)
    if why:
        if optional and not os.path.lexists(path):
            return env
        raise ValueError(why)
    with open(path) as f:
        for line in f:
            m = re.match(r'\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$', line)
            if m:
                words = shlex.split(m.group(2), comments=True)
                env[m.group(1)] = ' '.join(words)
    return env


def unit_argv(path):
    """ExecStart= of a unit file as argv, $VAR and ${VAR} expanded from its EnvironmentFile= and Environment=."""
    with open(path) as f:
        text = f.read().replace('\\\n', ' ')
    env, exec_start = {}, None
    for line in text.splitlines():
        key, sep, value = line.strip().partition('=')
        if not sep:
            continue
        if key == 'EnvironmentFile':
            env.update(env_file(value.strip()))
        elif key == 'Environment':
            for word in shlex.split(value):
                k, s, v = word.partition('=')
                if s:
                    env[k] = v
        elif key == 'ExecStart' and value.strip():
            exec_start = value.strip().lstrip('@-:+!')
    if exec_start is None:
        return None
    expanded = re.sub(r'\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?', lambda m: env.get(m.group(1), ''), exec_start)
    return shlex.split(expanded)


def inspect_unit(path):
    """(reader or None, ignored entry or None) for one unit file."""
    source = 'unit %s' % path
    why = untrusted_reason(path, True)
    if why:
        return None, dict(source=source, binary='', reason=why)
    try:
        argv = unit_argv(os.path.realpath(path))
    except (IOError, OSError, ValueError) as e:
        return None, dict(source=source, binary='', reason=str(e))
    if not argv or os.path.basename(argv[0]) not in NAMES:
        return None, None
    why = untrusted_reason(argv[0], True)
    if why:
        return None, dict(source=source, binary=argv[0], reason=why)
    return reader(source, [os.path.realpath(argv[0])] + argv[1:]), None


def units():
    readers, ignored, seen = [], [], set()
    for d in UNIT_DIRS:
        for path in sorted(glob.glob(os.path.join(d, '*node*exporter*.service'))):
            name = os.path.basename(path)
            if name in seen:
                continue
            seen.add(name)
            found, skipped = inspect_unit(path)
            if found:
                readers.append(found)
            if skipped:
                ignored.append(skipped)
    return readers, ignored


def describe(readers, ignored):
    said = ['%s reads %s' % (r['source'], r['directory'] or 'no directory') for r in readers]
    said += ['%s ignored (%s)' % (i['source'], i['reason']) for i in ignored]
    return '; '.join(said) or 'no node_exporter process or unit found'


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path'),
            service_users=dict(type='list', elements='str', default=['prometheus']),
        ),
        supports_check_mode=True,
    )
    readers, ignored = running(service_uids(module.params['service_users']))
    if not readers:
        readers, unit_ignored = units()
        ignored += unit_ignored
    directories = []
    for r in readers:
        if r['directory'] and r['directory'] not in directories:
            directories.append(r['directory'])
    result = dict(changed=False, readers=readers, ignored=ignored, directories=directories,
                  summary=describe(readers, ignored))
    want = module.params['path']
    if want:
        want = want.rstrip('/') or want
        result['reads'] = any(os.path.realpath(d) == os.path.realpath(want) for d in directories)
    elif len(directories) > 1:
        module.fail_json(msg='node_exporter on this host reads more than one textfile directory (%s): '
                             'agyctl will not guess; set agyctl_textfile_dir (the path option) to the one it should write'
                             % result['summary'], **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
