"""Option tables of the searchers: GNU grep and ripgrep (docs/security.md "What a rule covers").

Checked against grep(1) of GNU grep 3.8 and rg(1) of ripgrep 13/14. Both read the files and
folders they are given (the first operand is the pattern unless `-e`/`-f` gave one) and, without
one, the working directory (grep with `-r`). Left out, so unknown: `grep -R` and `rg -L` (follow
symbolic links out of the tree), `rg -z` (runs decompression programs), `rg --hostname-bin`;
`rg --pre` runs the program it names (role "runs").
"""

from __future__ import annotations

from .tables import Command, flag, optional, value

GREP = Command(
    options=(
        flag("-E", "--extended-regexp"), flag("-F", "--fixed-strings"), flag("-G", "--basic-regexp"),
        flag("-P", "--perl-regexp"), value("-e", "--regexp", gives_pattern=True),
        value("-f", "--file", role="reads", gives_pattern=True), flag("-i", "--ignore-case"), flag("-y"),
        flag("--no-ignore-case"), flag("-v", "--invert-match"), flag("-w", "--word-regexp"),
        flag("-x", "--line-regexp"), flag("-c", "--count"), optional("--color", "--colour"),
        flag("-L", "--files-without-match"), flag("-l", "--files-with-matches"), value("-m", "--max-count"),
        flag("-o", "--only-matching"), flag("-q", "--quiet", "--silent"), flag("-s", "--no-messages"),
        flag("-b", "--byte-offset"), flag("-H", "--with-filename"), flag("-h", "--no-filename"), value("--label"),
        flag("-n", "--line-number"), flag("-T", "--initial-tab"), flag("-Z", "--null"),
        value("-A", "--after-context"), value("-B", "--before-context"), value("-C", "--context"),
        value("--group-separator"), flag("--no-group-separator"), flag("-a", "--text"), value("--binary-files"),
        value("-D", "--devices"), value("-d", "--directories"), value("--exclude"),
        value("--exclude-from", role="reads"), value("--exclude-dir"), flag("-I"), value("--include"),
        flag("-r", "--recursive"), flag("--line-buffered"), flag("-U", "--binary"), flag("-z", "--null-data"),
        flag("--help"), flag("-V", "--version"),
    ),
    operands="pattern-then-reads",
    reads_cwd=True,
    reads_trees=True,
    numeric_short=True,
    summary="operands: the pattern, then files and folders read; not `-R`",
)

RG = Command(
    options=(
        value("-A", "--after-context"), flag("--auto-hybrid-regex"), value("-B", "--before-context"),
        flag("--binary"), flag("--block-buffered"), flag("-b", "--byte-offset"), flag("-s", "--case-sensitive"),
        value("--color"), value("--colors"), flag("--column"), flag("--no-column"), value("-C", "--context"),
        value("--context-separator"), flag("-c", "--count"), flag("--count-matches"), flag("--crlf"),
        flag("--debug"), flag("--trace"), value("--dfa-size-limit"), value("-E", "--encoding"), value("--engine"),
        value("--field-context-separator"), value("--field-match-separator"),
        value("-f", "--file", role="reads", gives_pattern=True), flag("--files", gives_pattern=True), flag("-l", "--files-with-matches"),
        flag("--files-without-match"), flag("-F", "--fixed-strings"), value("-g", "--glob"),
        flag("--glob-case-insensitive"), flag("--heading"), flag("--no-heading"), flag("-.", "--hidden"),
        value("--iglob"), flag("-i", "--ignore-case"), value("--ignore-file", role="reads"),
        flag("--ignore-file-case-insensitive"), flag("--include-zero"), flag("-v", "--invert-match"),
        flag("--json"), flag("--line-buffered"), flag("-n", "--line-number"), flag("-N", "--no-line-number"),
        flag("-x", "--line-regexp"), value("-M", "--max-columns"), flag("--max-columns-preview"),
        value("-m", "--max-count"), value("--max-depth"), value("--max-filesize"), flag("--mmap"),
        flag("--no-mmap"), flag("-U", "--multiline"), flag("--multiline-dotall"), flag("--no-config"),
        flag("-I", "--no-filename"), flag("--no-ignore"), flag("--no-ignore-dot"), flag("--no-ignore-exclude"),
        flag("--no-ignore-files"), flag("--no-ignore-global"), flag("--no-ignore-messages"),
        flag("--no-ignore-parent"), flag("--no-ignore-vcs"), flag("--no-messages"), flag("--no-pcre2-unicode"),
        flag("--no-require-git"), flag("--no-unicode"), flag("-0", "--null"), flag("--null-data"),
        flag("--one-file-system"), flag("-o", "--only-matching"), flag("--passthru"), value("--path-separator"),
        flag("-P", "--pcre2"), flag("--pcre2-version"), value("--pre", role="runs", what="a preprocessor program"),
        value("--pre-glob"), flag("-p", "--pretty"), flag("-q", "--quiet"), value("--regex-size-limit"),
        value("-e", "--regexp", gives_pattern=True), value("-r", "--replace"), flag("-S", "--smart-case"),
        value("--sort"), value("--sortr"), flag("--stats"), flag("-a", "--text"), value("-j", "--threads"),
        flag("--trim"), value("-t", "--type"), value("--type-add"), value("--type-clear"), flag("--type-list", gives_pattern=True),
        value("-T", "--type-not"), flag("-u", "--unrestricted"), flag("--vimgrep"), flag("-H", "--with-filename"),
        flag("-w", "--word-regexp"), flag("-h", "--help"), flag("-V", "--version"),
    ),
    operands="pattern-then-reads",
    reads_cwd=True,
    reads_trees=True,
    summary="operands: the pattern, then files and folders read (the working directory without one); not `-L`, `-z`",
)

SEARCH = {"grep": GREP, "rg": RG}
