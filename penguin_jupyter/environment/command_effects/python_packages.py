"""Option tables of the Python package tools: pip's list, show, freeze and check, conda's list and
info (docs/security.md "What a rule covers").

pip's are checked against `pip <sub> --help` of pip 23 (optparse: any unique abbreviation of a
long option is accepted, so only full names are known; the general options may come before or
after the subcommand). Roles worth knowing: `-o`/`-u` and the index options (`-i`,
`--index-url`, `--extra-index-url`, `-f`, `--proxy`, `--trusted-host`) reach the network;
`--python` runs another interpreter; `--log` and `--cache-dir` write; `--cert`, `--client-cert`,
`--path`, `-r` read. conda's are checked against conda's command reference (23.x–25.x): `conda
list --auth` and `conda info --unsafe-channels` print channel credentials; `conda info <pkg>`
(an old search, over the network) is unknown.
"""

from __future__ import annotations

from .tables import Command, Program, flag, value

PIP_GENERAL = (
    flag("-h", "--help"), flag("--debug"), flag("--isolated"), flag("--require-virtualenv"),
    value("--python", role="runs", what="another Python interpreter"), flag("-v", "--verbose"),
    flag("-V", "--version"), flag("-q", "--quiet"), value("--log", role="writes"), flag("--no-input"),
    value("--keyring-provider", role="runs", what="a keyring program"),
    value("--proxy", role="network", what="a proxy"), value("--retries"), value("--timeout"),
    value("--exists-action"), value("--trusted-host", role="network", what="an untrusted host"),
    value("--cert", role="reads"), value("--client-cert", role="reads"), value("--cache-dir", role="writes"),
    flag("--no-cache-dir"), flag("--disable-pip-version-check"), flag("--no-color"),
    flag("--no-python-version-warning"),
)

PIP_INDEX = (
    value("-i", "--index-url", role="network", what="a package index"),
    value("--extra-index-url", role="network", what="a package index"), flag("--no-index"),
    value("-f", "--find-links", role="network", what="a package index"),
)

PIP_LIST = Command(
    options=(
        *PIP_INDEX, flag("-o", "--outdated", role="network", what="the package index"),
        flag("-u", "--uptodate", role="network", what="the package index"), flag("-e", "--editable"),
        flag("-l", "--local"), flag("--user"), value("--path", role="reads"), flag("--pre"), value("--format"),
        flag("--not-required"), flag("--exclude-editable"), flag("--include-editable"), value("--exclude"),
    ),
    operands="none",
    summary="no operands",
)
PIP_SHOW = Command(options=(flag("-f", "--files"),), operands="plain", summary="operands: package names")
PIP_FREEZE = Command(
    options=(
        value("-r", "--requirement", role="reads"), flag("-l", "--local"), flag("--user"), value("--path", role="reads"),
        flag("--all"), flag("--exclude-editable"), value("--exclude"),
    ),
    operands="none",
    summary="no operands",
)
PIP_CHECK = Command(operands="none", summary="no operands")

PIP = Program(
    name="pip",
    global_options=PIP_GENERAL,
    globals_after_subcommand=True,
    subcommands={"list": PIP_LIST, "show": PIP_SHOW, "freeze": PIP_FREEZE, "check": PIP_CHECK},
    about="also pip3, pip3.11…; general options before or after the subcommand",
)

_CONDA_OUTPUT = (flag("--json"), flag("-v", "--verbose"), flag("-q", "--quiet"), flag("-h", "--help"))

CONDA_LIST = Command(
    options=(
        value("-n", "--name"), value("-p", "--prefix", role="reads"), *_CONDA_OUTPUT, flag("--show-channel-urls"),
        flag("--reverse"), flag("-c", "--canonical"), flag("-f", "--full-name"), flag("--explicit"), flag("--md5"),
        flag("--sha256"), flag("-e", "--export"), flag("-r", "--revisions"), flag("--no-pip"), flag("--size"),
        value("--fields"), flag("--auth", role="secrets", what="channel credentials"),
    ),
    operands="plain",
    summary="operands: a package name pattern",
)
CONDA_INFO = Command(
    options=(
        flag("-a", "--all"), flag("--base"), flag("-e", "--envs"), flag("-s", "--system"), *_CONDA_OUTPUT,
        flag("--unsafe-channels", role="secrets", what="channel credentials"),
    ),
    operands="none",
    summary="no operands",
)

CONDA = Program(name="conda", subcommands={"list": CONDA_LIST, "info": CONDA_INFO})
