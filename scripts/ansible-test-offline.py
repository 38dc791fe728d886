#!/usr/bin/python3
"""Run Debian's ansible-test with Debian's linters, offline.

ansible-test builds a virtualenv per sanity test and pip-installs pinned
linters into it; on a box that reaches only Debian's archive there is no pip
index. This runs ansible-test unchanged except for that step: each virtualenv
is made with --system-site-packages (so Debian's pylint, pycodestyle,
yamllint, voluptuous, jinja2, pyyaml are the ones used) and nothing is
pip-installed. Arguments are ansible-test's, e.g.
  scripts/ansible-test-offline.py sanity --python 3.11 --python-interpreter /usr/bin/python3
run from <tree>/ansible_collections/agyctl/fleet (docs/fleet.md).
"""
import sys

sys.path.insert(0, '/usr/lib/python3/dist-packages')

# pylint: disable=wrong-import-position,protected-access
from ansible_test._internal import venv  # noqa: E402
from ansible_test._internal.commands import sanity  # noqa: E402

_create = venv.create_virtual_environment


def _with_system_site_packages(args, python, path, system_site_packages=False, pip=False):
    return _create(args, python, path, True, pip)


sanity.create_virtual_environment = _with_system_site_packages
sanity.run_pip = lambda *args, **kwargs: None

from ansible_test._internal import main  # noqa: E402

if __name__ == '__main__':
    main()
