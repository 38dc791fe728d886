# -*- coding: utf-8 -*-
# Copyright: agyctl maintainers
# SPDX-License-Identifier: Apache-2.0
# The options every agyctl.fleet module takes (module_utils/agyctl.py COMMON_ARGS), documented once.
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r'''
options:
  state_dir:
    description: The server state directory (C(--state-dir)). Default the remote user's C(~/.gemini/antigravity-acp) (agyctl's default).
    type: path
  agyctl:
    description: How to run agyctl on the host (a command, or a prefix like C(node /opt/agyctl/bin/agyctl.js)).
    type: str
    default: agyctl
'''
