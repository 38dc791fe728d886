#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: agyctl maintainers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
# SPDX-License-Identifier: Apache-2.0
# agyctl_backup: `agyctl backup --json` on the host, with retention. changed
# when a snapshot was written; sessions that could not be snapshotted fail
# the task with their ids and reasons (the others are still in the snapshot).
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: agyctl_backup
author: agyctl maintainers (@agyctl)
short_description: Back up antigravity-acp conversations with agyctl
description:
  - Runs C(agyctl backup --json) (a consistent snapshot of every conversation, docs/backup.md) and applies retention.
  - In check mode nothing runs; the task reports that a snapshot would be written.
options:
  to:
    description: The backup directory (C(--to)). Default agyctl's, C(~/.local/state/agyctl/backups) of the remote user.
    type: path
  keep_last:
    description: Keep the N newest snapshots.
    type: int
  keep_daily:
    description: Keep the newest snapshot of each of the last N days (UTC).
    type: int
  keep_weekly:
    description: Keep the newest snapshot of each of the last N ISO weeks.
    type: int
  busy_timeout:
    description: How long to retry a locked database (C(--busy-timeout), e.g. C(10s)).
    type: str
  prometheus:
    description: Also write node_exporter textfile metrics to this file (C(backup --prometheus), agyctl 0.2 and later).
    type: path
extends_documentation_fragment:
  - agyctl.fleet.agyctl
'''

EXAMPLES = r'''
- agyctl.fleet.agyctl_backup:
    keep_last: 48
    keep_daily: 14
    keep_weekly: 8
'''

RETURN = r'''
snapshot:
  description: The snapshot written (name, path, created), or null.
  returned: always
  type: dict
sessions:
  description: The sessions in the snapshot (docs/json.md).
  returned: always
  type: list
failed:
  description: Sessions that could not be snapshotted, with reasons.
  returned: always
  type: list
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.agyctl.fleet.plugins.module_utils.agyctl import COMMON_ARGS, fail_with_error, module_result, option_args, run_agyctl


def main():
    module = AnsibleModule(
        argument_spec=dict(
            to=dict(type='path'),
            keep_last=dict(type='int'),
            keep_daily=dict(type='int'),
            keep_weekly=dict(type='int'),
            busy_timeout=dict(type='str'),
            prometheus=dict(type='path'),
            **COMMON_ARGS
        ),
        supports_check_mode=True,
    )
    p = module.params
    if module.check_mode:
        module.exit_json(changed=True, msg='check mode: agyctl backup would write a snapshot', snapshot=None, sessions=[], failed=[])
    args = ['backup'] + option_args(p, values=(('to', '--to'), ('keep_last', '--keep-last'), ('keep_daily', '--keep-daily'),
                                               ('keep_weekly', '--keep-weekly'), ('busy_timeout', '--busy-timeout'), ('prometheus', '--prometheus')))
    rc, doc, err = run_agyctl(module, args)
    snapshot = doc.get('snapshot')
    result = module_result(doc, rc, changed=bool(snapshot))
    failed = doc.get('failed') or []
    if failed:
        names = ', '.join('%s (%s)' % (f.get('id'), f.get('reason')) for f in failed)
        module.fail_json(msg='agyctl backup: %d session(s) could not be snapshotted: %s' % (len(failed), names), **result)
    if rc != 0:
        fail_with_error(module, rc, doc, changed=bool(snapshot))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
