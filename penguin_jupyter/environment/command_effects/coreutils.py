"""Option tables of the file-reading programs: GNU coreutils' cat, head, tail, wc, ls, du, df,
stat, GNU diff, file, and bash's echo and pwd, Debian's which (docs/security.md "What a rule
covers").

Each table lists the options of the program's manual (checked against the man pages of Debian
bookworm: coreutils 9.1, diffutils 3.8, file 5.44, debianutils) that only change what is printed,
and the ones that name a file, with their role. Left out on purpose, so they are unknown: options
that read a list of file names from a file (`wc`/`du --files0-from`, `file -f`), that follow
symbolic links while walking a tree (`ls -L`, `du -L`, `diff -r`, which also reads whole trees),
that run another program (`diff -l` runs `pr`; `file -z` decompressors) or that write
(`file -C` writes a compiled magic file, `file -p` resets access times), and `file -m`/`-S`.
"""

from __future__ import annotations

from .tables import Command, flag, optional, value

HELP = (flag("--help"), flag("--version"))

CAT = Command(
    options=(
        flag("-A", "--show-all"), flag("-b", "--number-nonblank"), flag("-e"), flag("-E", "--show-ends"),
        flag("-n", "--number"), flag("-s", "--squeeze-blank"), flag("-t"), flag("-T", "--show-tabs"),
        flag("-u"), flag("-v", "--show-nonprinting"), *HELP,
    ),
    operands="reads",
    summary="operands: files read",
)

HEAD = Command(
    options=(
        value("-c", "--bytes"), value("-n", "--lines"), flag("-q", "--quiet", "--silent"),
        flag("-v", "--verbose"), flag("-z", "--zero-terminated"), *HELP,
    ),
    operands="reads",
    numeric_short=True,
    summary="operands: files read; `-5` is a count",
)

TAIL = Command(
    options=(
        value("-c", "--bytes"), flag("-f"), optional("--follow"), flag("-F"), value("-n", "--lines"),
        value("--max-unchanged-stats"), value("--pid"), flag("-q", "--quiet", "--silent"), flag("--retry"),
        value("-s", "--sleep-interval"), flag("-v", "--verbose"), flag("-z", "--zero-terminated"), *HELP,
    ),
    operands="reads",
    numeric_short=True,
    summary="operands: files read; `-5` is a count",
)

WC = Command(
    options=(
        flag("-c", "--bytes"), flag("-m", "--chars"), flag("-l", "--lines"), flag("-L", "--max-line-length"),
        flag("-w", "--words"), *HELP,
    ),
    operands="reads",
    summary="operands: files read; not `--files0-from`",
)

LS = Command(
    options=(
        flag("-a", "--all"), flag("-A", "--almost-all"), flag("--author"), flag("-b", "--escape"),
        value("--block-size"), flag("-B", "--ignore-backups"), flag("-c"), flag("-C"), optional("--color"),
        flag("-d", "--directory"), flag("-D", "--dired"), flag("-f"), flag("-F"), optional("--classify"),
        flag("--file-type"), value("--format"), flag("--full-time"), flag("-g"),
        flag("--group-directories-first"), flag("-G", "--no-group"), flag("-h", "--human-readable"),
        flag("--si"), flag("-H", "--dereference-command-line"), flag("--dereference-command-line-symlink-to-dir"),
        value("--hide"), optional("--hyperlink"), value("--indicator-style"), flag("-i", "--inode"),
        value("-I", "--ignore"), flag("-k", "--kibibytes"), flag("-l"), flag("-m"),
        flag("-n", "--numeric-uid-gid"), flag("-N", "--literal"), flag("-o"), flag("-p"),
        flag("-q", "--hide-control-chars"), flag("--show-control-chars"), flag("-Q", "--quote-name"),
        value("--quoting-style"), flag("-r", "--reverse"), flag("-R", "--recursive"), flag("-s", "--size"),
        flag("-S"), value("--sort"), value("--time"), value("--time-style"), flag("-t"),
        value("-T", "--tabsize"), flag("-u"), flag("-U"), flag("-v"), value("-w", "--width"), flag("-x"),
        flag("-X"), flag("-Z", "--context"), flag("--zero"), flag("-1"), *HELP,
    ),
    operands="reads",
    reads_cwd=True,
    summary="operands: files and folders read (the working directory without one); not `-L`",
)

DU = Command(
    options=(
        flag("-0", "--null"), flag("-a", "--all"), flag("--apparent-size"), value("-B", "--block-size"),
        flag("-b", "--bytes"), flag("-c", "--total"), flag("-D", "--dereference-args"), flag("-H"),
        value("-d", "--max-depth"), flag("-h", "--human-readable"), flag("--inodes"), flag("-k"),
        flag("-l", "--count-links"), flag("-m"), flag("-P", "--no-dereference"), flag("-S", "--separate-dirs"),
        flag("--si"), flag("-s", "--summarize"), value("-t", "--threshold"), optional("--time"),
        value("--time-style"), value("-X", "--exclude-from", role="reads"), value("--exclude"),
        flag("-x", "--one-file-system"), *HELP,
    ),
    operands="reads",
    reads_cwd=True,
    summary="operands: folders read (the working directory without one); not `-L`, `--files0-from`",
)

DF = Command(
    options=(
        flag("-a", "--all"), value("-B", "--block-size"), flag("-h", "--human-readable"), flag("-H", "--si"),
        flag("-i", "--inodes"), flag("-k"), flag("-l", "--local"), flag("--no-sync"), optional("--output"),
        flag("-P", "--portability"), flag("--sync"), flag("--total"), value("-t", "--type"),
        flag("-T", "--print-type"), value("-x", "--exclude-type"), flag("-v"), *HELP,
    ),
    operands="reads",
    summary="operands: files whose file system is shown",
)

STAT = Command(
    options=(
        flag("-L", "--dereference"), flag("-f", "--file-system"), value("--cached"), value("-c", "--format"),
        value("--printf"), flag("-t", "--terse"), *HELP,
    ),
    operands="reads",
    summary="operands: files read (their metadata)",
)

FILE = Command(
    options=(
        flag("--apple"), flag("-b", "--brief"), flag("-c", "--checking-printout"), flag("-d"), flag("-E"),
        value("-e", "--exclude"), value("--exclude-quiet"), flag("--extension"), value("-F", "--separator"),
        flag("-h", "--no-dereference"), flag("-i", "--mime"), flag("--mime-type"), flag("--mime-encoding"),
        flag("-k", "--keep-going"), flag("-l", "--list"), flag("-L", "--dereference"), flag("-N", "--no-pad"),
        flag("-n", "--no-buffer"), flag("-0", "--print0"), value("-P", "--parameter"), flag("-r", "--raw"),
        flag("-s", "--special-files"), flag("-v", "--version"), flag("--help"),
    ),
    operands="reads",
    summary="operands: files read; not `-C` (writes), `-f`, `-m`, `-p`, `-S`, `-z`, `-Z`",
)

_DIFF_FORMATS = tuple(
    value(f"--{kind}-{what}-format")
    for kind, what in (("old", "group"), ("new", "group"), ("changed", "group"), ("unchanged", "group"),
                       ("old", "line"), ("new", "line"), ("unchanged", "line"))
)

DIFF = Command(
    options=(
        flag("--normal"), flag("-q", "--brief"), flag("-s", "--report-identical-files"), flag("-c"),
        value("-C"), optional("--context"), flag("-u"), value("-U"), optional("--unified"), flag("-e", "--ed"),
        flag("-n", "--rcs"), flag("-y", "--side-by-side"), value("-W", "--width"), flag("--left-column"),
        flag("--suppress-common-lines"), flag("-p", "--show-c-function"), value("-F", "--show-function-line"),
        value("--label"), flag("-t", "--expand-tabs"), flag("-T", "--initial-tab"), value("--tabsize"),
        flag("--suppress-blank-empty"), flag("--no-dereference"), flag("-N", "--new-file"),
        flag("--unidirectional-new-file"), flag("--ignore-file-name-case"), flag("--no-ignore-file-name-case"),
        value("-x", "--exclude"), value("-X", "--exclude-from", role="reads"), value("-S", "--starting-file"),
        value("--from-file", role="reads"), value("--to-file", role="reads"), flag("-i", "--ignore-case"),
        flag("-E", "--ignore-tab-expansion"), flag("-Z", "--ignore-trailing-space"),
        flag("-b", "--ignore-space-change"), flag("-w", "--ignore-all-space"), flag("-B", "--ignore-blank-lines"),
        value("-I", "--ignore-matching-lines"), flag("-a", "--text"), flag("--strip-trailing-cr"),
        value("-D", "--ifdef"), value("--line-format"), *_DIFF_FORMATS, flag("-d", "--minimal"),
        value("--horizon-lines"), flag("--speed-large-files"), optional("--color"), value("--palette"),
        flag("--help"), flag("-v", "--version"),
    ),
    operands="reads",
    summary="operands: files read; not `-r` (follows links through whole trees), `-l` (runs `pr`)",
)

ECHO = Command(options=(flag("-n"), flag("-e"), flag("-E")), operands="plain", summary="operands: text")
PWD = Command(options=(flag("-L"), flag("-P")), operands="none", summary="no operands")
WHICH = Command(options=(flag("-a"), flag("-s")), operands="plain", summary="operands: program names")

COREUTILS = {
    "cat": CAT,
    "head": HEAD,
    "tail": TAIL,
    "wc": WC,
    "ls": LS,
    "du": DU,
    "df": DF,
    "stat": STAT,
    "file": FILE,
    "diff": DIFF,
    "echo": ECHO,
    "pwd": PWD,
    "which": WHICH,
}
