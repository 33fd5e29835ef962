"""Option table of nvidia-smi's queries (docs/security.md "What a rule covers").

Checked against nvidia-smi(1) (driver 535–580). Only the listing and query options are known;
`-f`/`--filename` writes its output to a file, and every option that changes a GPU's state
(`-pm`, `-e`, `-r`, `-ac`, `-pl`, `-c`…) and every subcommand (`topo`, `mig`, `drain`…) is
unknown. nvidia-smi's options are whole words (`-lms`), never bundled.
"""

from __future__ import annotations

from .tables import Command, flag, value

NVIDIA_SMI = Command(
    options=(
        flag("-h", "--help"), flag("--version"), flag("-L", "--list-gpus"), flag("-B", "--list-excluded-gpus"),
        flag("-q", "--query"), flag("-u", "--unit"), value("-i", "--id"), flag("-x", "--xml-format"), flag("--dtd"),
        value("-d", "--display"), value("-l", "--loop"), value("-lms", "--loop-ms"), value("--query-gpu"),
        value("--query-supported-clocks"), value("--query-compute-apps"), value("--query-accounted-apps"),
        value("--query-retired-pages"), value("--query-remapped-rows"), value("--format"),
        value("-f", "--filename", role="writes"),
    ),
    operands="none",
    summary="no operands (subcommands are unknown); not the options that change a GPU",
)
