#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: agyctl maintainers
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
# SPDX-License-Identifier: Apache-2.0
# agyctl_safe_path: the test the role passes before it manages a path as
# root. A link would redirect root's chown or write; a directory another user
# owns (or may write) lets that user swap what root is about to manage.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: agyctl_safe_path
author: agyctl maintainers (@agyctl)
short_description: Refuse paths root must not manage
description:
  - Fails unless root may manage each of C(paths) - create it, change its owner, write or link it - without following
    another user's lead.
  - A path that exists must not be a link.
  - The directory holding it (for a missing path, its nearest existing directory) must be owned by root and writable
    by no one else, so no one else can make, swap or remove the path.
  - Every directory above that must be owned by root (or one of C(trusted_users)) and writable by no one else; a
    sticky directory such as C(/tmp) is allowed there. A link on the way must be root's; what it points to is checked
    the same way.
  - Reads only; supports check mode.
options:
  paths:
    description: The paths the caller manages as root, each absolute.
    type: list
    elements: path
    required: true
  trusted_users:
    description:
      - Accounts trusted like root above the directory holding a path. Debian's package makes C(/var/lib/prometheus)
        the exporter's service user's (C(prometheus)), above the root-owned textfile directory.
    type: list
    elements: str
    default: [prometheus]
'''

EXAMPLES = r'''
- agyctl.fleet.agyctl_safe_path:
    paths: [/var/lib/prometheus/node-exporter, /var/lib/prometheus/node-exporter/agyctl]
'''

RETURN = r'''
checked:
  description: The paths checked, as given.
  returned: always
  type: list
  elements: str
problems:
  description: Why root must not manage them (empty when it may).
  returned: always
  type: list
  elements: str
'''

import os
import pwd
import stat

from ansible.module_utils.basic import AnsibleModule


def owner_problem(path, st, trusted, allow_sticky):
    if st.st_uid not in trusted:
        return '%s is owned by uid %d, not root' % (path, st.st_uid)
    if stat.S_ISLNK(st.st_mode):
        return None
    if not stat.S_ISDIR(st.st_mode):
        return '%s is not a directory' % path
    writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and not (allow_sticky and st.st_mode & stat.S_ISVTX):
        return '%s is writable by others (mode %04o)' % (path, stat.S_IMODE(st.st_mode))
    return None


def chain_problem(directory, trusted):
    """Why the directories from `directory` up to / are not root's alone (None when they are)."""
    current, nearest = directory, True
    while True:
        try:
            st = os.lstat(current)
        except OSError:
            if current == '/':
                return 'cannot stat /'
            current = os.path.dirname(current)
            continue
        # The nearest existing directory decides who may make, swap or remove what is below it: root alone.
        why = owner_problem(current, st, trusted, allow_sticky=not nearest)
        if why:
            return why
        nearest = False
        if current == '/':
            return None
        current = os.path.dirname(current)


def problem(path, trusted):
    """Why root must not manage `path`, or None."""
    if not os.path.isabs(path):
        return '%s is not an absolute path' % path
    path = os.path.normpath(path)
    if os.path.islink(path):
        return '%s is a link' % path
    parent = os.path.dirname(path)
    # A link above (merged /usr's /lib) is fine when root's: then what it points to is checked too.
    return chain_problem(parent, trusted) or chain_problem(os.path.realpath(parent), trusted)


def trusted_uids(names):
    uids = set([0])
    for name in names:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            pass
    return uids


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type='list', elements='path', required=True),
            trusted_users=dict(type='list', elements='str', default=['prometheus']),
        ),
        supports_check_mode=True,
    )
    trusted = trusted_uids(module.params['trusted_users'])
    problems = [p for p in (problem(path, trusted) for path in module.params['paths']) if p]
    if problems:
        module.fail_json(msg='root will not manage %s: %s' % (', '.join(module.params['paths']), '; '.join(problems)),
                         checked=module.params['paths'], problems=problems)
    module.exit_json(changed=False, checked=module.params['paths'], problems=[])


if __name__ == '__main__':
    main()
