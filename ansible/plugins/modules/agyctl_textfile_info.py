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
    C(--collector.textfile.directory) each one reads.
  - Running processes are read first (their command line). When none runs, the systemd units named like
    C(*node*exporter*.service) are read (C(ExecStart=), with C($VAR) taken from their C(EnvironmentFile=), e.g. the C(ARGS)
    of C(/etc/default/prometheus-node-exporter)). Without the flag, the binary's compiled-in default (from its C(--help)) applies.
    Drop-in overrides of the units are not read.
  - A collector switched off with C(--no-collector.textfile) reads nothing.
options:
  path:
    description: The directory the caller would write; C(reads) then says whether any collector found reads it.
    type: path
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
summary:
  description: The readers in one line, for messages (C(process 31 reads /var/lib/prometheus/node-exporter)).
  returned: always
  type: str
reads:
  description: Whether a collector found reads C(path) (only when C(path) is given).
  returned: when path is given
  type: bool
'''

import glob
import os
import re
import shlex

from ansible.module_utils.basic import AnsibleModule

NAMES = ('node_exporter', 'prometheus-node-exporter')
FLAG = '--collector.textfile.directory'
UNIT_DIRS = ('/etc/systemd/system', '/run/systemd/system', '/lib/systemd/system', '/usr/lib/systemd/system')


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


def compiled_default(module, exe, cache):
    """The directory a binary reads without the flag, from its own --help ('' when it has none)."""
    if exe not in cache:
        cache[exe] = ''
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            rc, out, err = module.run_command([exe, '--help'])
            m = re.search(re.escape(FLAG) + r'="([^"]*)"', out + err)
            cache[exe] = m.group(1) if m else ''
    return cache[exe]


def reader(module, source, argv, cache):
    found, off = textfile_flag(argv[1:])
    if off:
        directory = ''
    elif found is not None:
        directory = found
    else:
        directory = compiled_default(module, argv[0], cache)
    return dict(source=source, binary=argv[0], directory=directory.rstrip('/') or directory)


def running(module, cache):
    out = []
    for cmdline in glob.glob('/proc/[0-9]*/cmdline'):
        pid = cmdline.split('/')[2]
        try:
            with open(cmdline, 'rb') as f:
                argv = [a.decode('utf-8', 'replace') for a in f.read().split(b'\0') if a]
            exe = os.readlink('/proc/%s/exe' % pid)
        except (IOError, OSError):
            continue
        if argv and os.path.basename(exe) in NAMES:
            out.append(reader(module, 'process %s' % pid, [exe] + argv[1:], cache))
    return out


def env_file(path):
    env = {}
    try:
        with open(path.lstrip('-')) as f:
            for line in f:
                m = re.match(r'\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$', line)
                if m:
                    words = shlex.split(m.group(2), comments=True)
                    env[m.group(1)] = ' '.join(words)
    except (IOError, OSError, ValueError):
        pass
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


def units(module, cache):
    out, seen = [], set()
    for d in UNIT_DIRS:
        for path in sorted(glob.glob(os.path.join(d, '*node*exporter*.service'))):
            name = os.path.basename(path)
            if name in seen:
                continue
            seen.add(name)
            try:
                argv = unit_argv(os.path.realpath(path))
            except (IOError, OSError, ValueError):
                continue
            if argv and os.path.basename(argv[0]) in NAMES:
                out.append(reader(module, 'unit %s' % path, argv, cache))
    return out


def main():
    module = AnsibleModule(argument_spec=dict(path=dict(type='path')), supports_check_mode=True)
    cache = {}
    readers = running(module, cache) or units(module, cache)
    directories = []
    for r in readers:
        if r['directory'] and r['directory'] not in directories:
            directories.append(r['directory'])
    summary = '; '.join('%s reads %s' % (r['source'], r['directory'] or 'no directory') for r in readers)
    result = dict(changed=False, readers=readers, directories=directories,
                  summary=summary or 'no node_exporter process or unit found')
    want = module.params['path']
    if want:
        want = want.rstrip('/') or want
        result['reads'] = any(os.path.realpath(d) == os.path.realpath(want) for d in directories)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
