#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: agyctl maintainers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
# SPDX-License-Identifier: Apache-2.0
# agyctl_settings: the auth type (and gcp project/location) in the server's
# settings.json, through `agyctl settings set-auth`. Idempotent, check mode
# and --diff; a malformed file fails with agyctl's message and is not touched.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: agyctl_settings
author: agyctl maintainers (@agyctl)
short_description: Set the antigravity-acp auth type with agyctl
description:
  - Runs C(agyctl settings show --json) and, when the file says something else, C(agyctl settings set-auth TYPE --json).
  - Every other key of settings.json is kept. A settings.json that is not valid JSON fails the task with agyctl's message and is left as it is.
options:
  auth_type:
    description: The auth type (C(vertex-ai) is written as C(agent-platform)).
    type: str
    required: true
    choices: [oauth-personal, gemini-api-key, oauth-business, agent-platform, vertex-ai]
  project:
    description: gcp.project (oauth-business, agent-platform). Unset keeps the file's (or agyctl takes GOOGLE_CLOUD_PROJECT).
    type: str
  location:
    description: gcp.location, a region like us-central1.
    type: str
extends_documentation_fragment:
  - agyctl.fleet.agyctl
'''

EXAMPLES = r'''
- agyctl.fleet.agyctl_settings:
    auth_type: oauth-personal
- agyctl.fleet.agyctl_settings:
    auth_type: agent-platform
    project: my-proj
    location: us-central1
'''

RETURN = r'''
settings:
  description: agyctl's view of the file after the task (the C(settings) object of its JSON, docs/json.md).
  returned: always
  type: dict
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.agyctl.fleet.plugins.module_utils.agyctl import COMMON_ARGS, fail_with_error, run_agyctl


def summary(auth_type, project, location):
    """What --diff shows: the fields this module manages, never the rest of the file."""
    lines = ['auth.type: %s' % (auth_type or '(none)')]
    if project:
        lines.append('gcp.project: %s' % project)
    if location:
        lines.append('gcp.location: %s' % location)
    return '\n'.join(lines) + '\n'


def malformed_message(module):
    """agyctl's own words about a file it cannot parse (validate never writes)."""
    rc, doc, err = run_agyctl(module, ['settings', 'validate'])
    for p in doc.get('problems') or []:
        if p.get('id') in ('json-invalid', 'shape-invalid'):
            return p.get('message'), p.get('hint')
    return (doc.get('error') or {}).get('message', 'settings.json cannot be parsed'), None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            auth_type=dict(type='str', required=True, choices=['oauth-personal', 'gemini-api-key', 'oauth-business', 'agent-platform', 'vertex-ai']),
            project=dict(type='str'),
            location=dict(type='str'),
            **COMMON_ARGS
        ),
        supports_check_mode=True,
    )
    p = module.params
    want_type = 'agent-platform' if p['auth_type'] == 'vertex-ai' else p['auth_type']
    rc, doc, err = run_agyctl(module, ['settings', 'show'])
    if rc != 0:
        fail_with_error(module, rc, doc)
    cur = doc.get('settings') or {}
    if cur.get('parseError'):
        msg, hint = malformed_message(module)
        module.fail_json(msg=msg, hint=hint, settings=cur, changed=False)
    want_project = p['project'] if p['project'] is not None else cur.get('project')
    want_location = p['location'] if p['location'] is not None else cur.get('location')
    differs = (cur.get('authTypeRaw') != want_type or want_project != cur.get('project') or want_location != cur.get('location'))
    before = summary(cur.get('authTypeRaw'), cur.get('project'), cur.get('location')) if cur.get('exists') else ''
    if not differs:
        module.exit_json(changed=False, settings=cur)
    diff = dict(before=before, after=summary(want_type, want_project, want_location), before_header=cur.get('path'), after_header=cur.get('path'))
    if module.check_mode:
        module.exit_json(changed=True, diff=diff, settings=cur)
    args = ['settings', 'set-auth', want_type]
    if p['project'] is not None:
        args += ['--project', p['project']]
    if p['location'] is not None:
        args += ['--location', p['location']]
    rc, doc, err = run_agyctl(module, args)
    if rc != 0:
        fail_with_error(module, rc, doc, settings=doc.get('settings'))
    after = doc.get('settings') or {}
    written = bool(after.get('written'))
    diff['after'] = summary(after.get('authTypeRaw'), after.get('project'), after.get('location'))
    module.exit_json(changed=written, diff=diff if written else None, settings=after,
                     restart_required=doc.get('restartRequired', False), notice=doc.get('notice'))


if __name__ == '__main__':
    main()
