#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: agyctl maintainers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
# SPDX-License-Identifier: Apache-2.0
# agyctl_check: `agyctl check --json` on the host. Its JSON is the result;
# a failing exit code fails the host with agyctl's status and the failed
# checks' messages and fixes. A check changes nothing, so never `changed`.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: agyctl_check
author: agyctl maintainers (@agyctl)
short_description: Check antigravity-acp credentials with agyctl
description:
  - Runs C(agyctl check --json) (static checks; C(live) or C(restart) also start the server) and returns its document.
  - Fails the host when agyctl exits non-zero (status C(not-authenticated), C(reauth-required), C(misconfigured),
    C(server-error), C(timeout)), naming the failed checks and their fixes.
  - The task's C(environment:) reaches agyctl (key types need their variables there).
options:
  live:
    description: Also start the server and open a session without authenticate (C(--live)).
    type: bool
    default: false
  restart:
    description: Also load that session on a fresh server (C(--restart), implies live).
    type: bool
    default: false
  timeout:
    description: agyctl's C(--timeout) for the whole check.
    type: str
  prometheus:
    description: Also write node_exporter textfile metrics to this file (C(--prometheus)). Not written in check mode.
    type: path
  server:
    description: The server command (agyctl's C(--server)); default agyctl's own search (AGYCTL_SERVER, then PATH).
    type: str
extends_documentation_fragment:
  - agyctl.fleet.agyctl
'''

EXAMPLES = r'''
- agyctl.fleet.agyctl_check:
- agyctl.fleet.agyctl_check:
    live: true
    timeout: 90s
'''

RETURN = r'''
status:
  description: agyctl's status (ok, not-authenticated, reauth-required, misconfigured, server-error, timeout).
  returned: always
  type: str
rc:
  description: agyctl's exit code.
  returned: always
  type: int
checks:
  description: The checks, as in docs/json.md.
  returned: always
  type: list
token:
  description: What the token file says (mode, age, refresh token present, expiresInS); absent without one.
  returned: when a token file exists
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.agyctl.fleet.plugins.module_utils.agyctl import COMMON_ARGS, fail_with_error, module_result, option_args, run_agyctl


def failure_message(doc, rc):
    failed = [c for c in doc.get('checks') or [] if not c.get('ok') and c.get('severity') == 'error']
    parts = ['%s: %s%s' % (c.get('id'), c.get('message'), ' (fix: %s)' % c['hint'] if c.get('hint') else '') for c in failed]
    return 'agyctl check: %s (exit %s)%s' % (doc.get('status'), rc, ': ' + '; '.join(parts) if parts else '')


def main():
    module = AnsibleModule(
        argument_spec=dict(
            live=dict(type='bool', default=False),
            restart=dict(type='bool', default=False),
            timeout=dict(type='str'),
            prometheus=dict(type='path'),
            server=dict(type='str'),
            **COMMON_ARGS
        ),
        supports_check_mode=True,
    )
    p = module.params
    # --server is a global option: it goes before the command. check mode reads, but writes no metrics file.
    args = option_args(p, values=(('server', '--server'),)) + ['check'] + option_args(
        p, values=(('timeout', '--timeout'),), switches=(('live', '--live'), ('restart', '--restart')))
    if p['prometheus'] and not module.check_mode:
        args += ['--prometheus', p['prometheus']]
    rc, doc, err = run_agyctl(module, args)
    if 'status' not in doc:
        fail_with_error(module, rc, doc, changed=False)
    result = module_result(doc, rc, changed=False)
    if rc != 0:
        hints = [c['hint'] for c in doc.get('checks') or [] if not c.get('ok') and c.get('hint')]
        result['hint'] = '; '.join(hints) if hints else None
        module.fail_json(msg=failure_message(doc, rc), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
