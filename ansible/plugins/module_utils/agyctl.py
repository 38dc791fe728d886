# -*- coding: utf-8 -*-
# Copyright: agyctl maintainers
# SPDX-License-Identifier: Apache-2.0
# Shared by the agyctl.fleet modules: build the agyctl command line, run it
# with --json in the task's environment, and parse its one JSON document.
# Nothing here interprets agyctl's findings; the modules only map them to
# changed/failed.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import shlex

COMMON_ARGS = dict(
    agyctl=dict(type='str', default='agyctl'),
    state_dir=dict(type='path'),
)


def agyctl_argv(module, args):
    """`agyctl` may be a command prefix ("node /opt/agyctl/bin/agyctl.js"); found on PATH when it is a bare name."""
    prefix = shlex.split(module.params['agyctl'])
    if not prefix:
        module.fail_json(msg='agyctl must name the agyctl command, e.g. agyctl or /usr/local/bin/agyctl')
    if '/' not in prefix[0] and not module.get_bin_path(prefix[0]):
        module.fail_json(msg='agyctl could not be run as %r: %s is not on the PATH of the remote user' % (module.params['agyctl'], prefix[0]),
                         hint='install agyctl on the host (the agyctl.fleet.agyctl role does), or set the agyctl parameter to its path')
    argv = list(prefix)
    if module.params.get('state_dir'):
        argv += ['--state-dir', module.params['state_dir']]
    return argv + list(args) + ['--json', '--no-color']


def run_agyctl(module, args):
    """Returns (rc, document, stderr). A document that is not JSON fails the task with what agyctl said."""
    argv = agyctl_argv(module, args)
    try:
        rc, out, err = module.run_command(argv, check_rc=False, environ_update={'NO_COLOR': '1'})
    except Exception as e:  # run_command raises for a missing executable on some versions
        module.fail_json(msg='could not run %s: %s' % (argv[0], e), cmd=argv)
    text = (out or '').strip()
    try:
        doc = json.loads(text) if text else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        if rc in (126, 127) or 'No such file' in (err or ''):
            module.fail_json(msg='agyctl could not be run as %r: %s' % (module.params['agyctl'], (err or '').strip() or 'not found'), rc=rc, cmd=argv,
                             hint='install agyctl on the host (the agyctl.fleet.agyctl role does), or set the agyctl parameter to its path')
        module.fail_json(msg='agyctl printed no JSON document (exit %s): %s' % (rc, (err or text).strip()[-2000:]), rc=rc, cmd=argv)
    return rc, doc, err or ''


def option_args(params, values=(), switches=()):
    """agyctl flags from module parameters: `values` are (param, flag) pairs passed with their value when set
    (an empty string counts as unset: templated `{{ x | default('') }}`), `switches` (param, flag) pairs passed
    alone when true."""
    args = []
    for key, flag in values:
        if params.get(key) is not None and params.get(key) != '':
            args += [flag, str(params[key])]
    for key, flag in switches:
        if params.get(key):
            args.append(flag)
    return args


def module_result(doc, rc, changed):
    """agyctl's JSON document as the task result (without its `ok`, which changed/failed say), with changed and rc."""
    result = dict(doc)
    result.pop('ok', None)
    result.update(changed=changed, rc=rc)
    return result


def fail_with_error(module, rc, doc, **extra):
    """agyctl's own error document: its message and hint, as they are."""
    error = doc.get('error') or {}
    module.fail_json(msg=error.get('message') or 'agyctl failed with exit %s' % rc, hint=error.get('hint'), code=error.get('code'), rc=rc, **extra)
