"""Option tables of git's reading subcommands (docs/security.md "What a rule covers", git).

Checked against git 2.39's manual pages (git(1), git-status, git-blame, git-ls-files,
git-ls-tree, git-rev-parse, git-describe, git-shortlog, git-log, git-diff, git-show) and its
parse-options rules: git accepts any unique abbreviation of a long option (`--out` for
`--output`), so only the full names below are known. Roles worth knowing:

* `--output=<file>` writes the file (log, diff, show, and blame and shortlog, which take the diff
  options through git's revision machinery though their pages do not list it); git expands
  `~` in it itself;
* `--ext-diff` runs an external diff program, `--show-signature` and a `%G…` format placeholder run
  gpg; `-O`, `-S`, `--contents`, `--ignore-revs-file`, `--exclude-from` read the file they name;
* before the subcommand only the options that change nothing about where git looks are known:
  `-C`, `-c`, `--git-dir`, `--work-tree`, `--exec-path`, `-p`/`--paginate`… are unknown.

Every git subcommand also reads its repository and runs what its configuration names
(`git_repository.repository_effects`). Operands (revisions and paths) are treated as paths read.
"""

from __future__ import annotations

from .git_repository import repository_effects
from .tables import Command, Option, Program, Role, flag, optional, value


def _format(text: str) -> tuple[Role, str] | None:
    """A pretty format with a signature placeholder (`%G?`, `%GS`…) makes git run gpg."""
    return ("runs", "gpg (a %G signature placeholder)") if "%G" in text else None


GLOBAL = (
    flag("-P", "--no-pager"), flag("--no-optional-locks"), flag("--literal-pathspecs"), flag("--glob-pathspecs"),
    flag("--noglob-pathspecs"), flag("--icase-pathspecs"), flag("--no-replace-objects"),
)

DIFF_OUTPUT: tuple[Option, ...] = (
    flag("-p", "-u", "--patch"), flag("-s", "--no-patch"), optional("-U", "--unified"),
    value("--output", role="writes"), value("--output-indicator-new"), value("--output-indicator-old"),
    value("--output-indicator-context"), flag("--raw"), flag("--patch-with-raw"), flag("--indent-heuristic"),
    flag("--no-indent-heuristic"), flag("--minimal"), flag("--patience"), flag("--histogram"), value("--anchored"),
    value("--diff-algorithm"), optional("--stat"), value("--stat-width"), value("--stat-name-width"),
    value("--stat-count"), value("--stat-graph-width"), flag("--compact-summary"), flag("--numstat"),
    flag("--shortstat"), optional("-X", "--dirstat"), flag("--cumulative"), optional("--dirstat-by-file"),
    flag("--summary"), flag("--patch-with-stat"), flag("-z"), flag("--name-only"), flag("--name-status"),
    optional("--color"), flag("--no-color"), optional("--color-moved"), flag("--no-color-moved"),
    value("--color-moved-ws"), flag("--no-color-moved-ws"), optional("--word-diff"), value("--word-diff-regex"),
    optional("--color-words"), flag("--no-renames"), flag("--rename-empty"), flag("--no-rename-empty"),
    flag("--check"), value("--ws-error-highlight"), flag("--full-index"), flag("--binary"), optional("--abbrev"),
    optional("-B", "--break-rewrites"), optional("-M", "--find-renames"), optional("-C", "--find-copies"),
    flag("--find-copies-harder"), flag("-D", "--irreversible-delete"), value("-l"), value("--diff-filter"),
    value("-S"), value("-G"), value("--find-object"), flag("--pickaxe-all"), flag("--pickaxe-regex"),
    value("-O", role="reads"), value("--skip-to"), value("--rotate-to"), flag("-R"), optional("--relative"),
    flag("--no-relative"), flag("-a", "--text"), flag("--ignore-cr-at-eol"), flag("--ignore-space-at-eol"),
    flag("-b", "--ignore-space-change"), flag("-w", "--ignore-all-space"), flag("--ignore-blank-lines"),
    value("-I", "--ignore-matching-lines"), value("--inter-hunk-context"), flag("-W", "--function-context"),
    flag("--ext-diff", role="runs", what="an external diff program"), flag("--no-ext-diff"), flag("--textconv"),
    flag("--no-textconv"), optional("--ignore-submodules"), value("--src-prefix"), value("--dst-prefix"),
    flag("--no-prefix"), value("--line-prefix"), flag("--ita-invisible-in-index"), flag("--exit-code"),
    flag("--quiet"),
)

REVISIONS: tuple[Option, ...] = (
    value("-n", "--max-count"), value("--skip"), value("--since"), value("--after"), value("--since-as-filter"),
    value("--until"), value("--before"), value("--author"), value("--committer"), value("--grep-reflog"),
    value("--grep"), flag("--all-match"), flag("--invert-grep"), flag("-i", "--regexp-ignore-case"),
    flag("--basic-regexp"), flag("-E", "--extended-regexp"), flag("-F", "--fixed-strings"),
    flag("-P", "--perl-regexp"), flag("--remove-empty"), flag("--merges"), flag("--no-merges"),
    value("--min-parents"), value("--max-parents"), flag("--no-min-parents"), flag("--no-max-parents"),
    flag("--first-parent"), flag("--exclude-first-parent-only"), flag("--not"), flag("--all"),
    optional("--branches"), optional("--tags"), optional("--remotes"), value("--glob"), value("--exclude"),
    flag("--reflog"), flag("--single-worktree"), flag("--ignore-missing"), flag("--cherry-mark"),
    flag("--cherry-pick"), flag("--left-only"), flag("--right-only"), flag("--cherry"), flag("-g", "--walk-reflogs"),
    flag("--merge"), flag("--boundary"), flag("--simplify-by-decoration"), flag("--show-pulls"),
    flag("--full-history"), flag("--dense"), flag("--sparse"), flag("--simplify-merges"),
    optional("--ancestry-path"), flag("--date-order"), flag("--author-date-order"), flag("--topo-order"),
    flag("--reverse"), optional("--no-walk"), flag("--do-walk"), flag("--follow"),
)

LOG_FORMAT: tuple[Option, ...] = (
    optional("--pretty", check=_format), value("--format", check=_format), flag("--abbrev-commit"),
    flag("--no-abbrev-commit"), flag("--oneline"), value("--encoding"), optional("--expand-tabs"),
    flag("--no-expand-tabs"), optional("--notes"), flag("--no-notes"), optional("--show-notes"),
    flag("--standard-notes"), flag("--no-standard-notes"),
    flag("--show-signature", role="runs", what="gpg, to check signatures"), flag("--relative-date"),
    value("--date"), flag("--parents"), flag("--children"), flag("--left-right"), flag("--graph"),
    optional("--show-linear-break"), optional("--decorate"), flag("--no-decorate"), value("--decorate-refs"),
    value("--decorate-refs-exclude"), flag("--clear-decorations"), flag("--source"), flag("--mailmap"),
    flag("--no-mailmap"), flag("--use-mailmap"), flag("--no-use-mailmap"), flag("--full-diff"),
    flag("--log-size"), value("-L"), value("--diff-merges"), flag("--no-diff-merges"),
    flag("--combined-all-paths"), flag("--cc"), flag("-c"), flag("-m"), flag("-t"),
)


def _git(*options: Option, numeric_short: bool = False, summary: str = "") -> Command:
    return Command(
        options=options,
        operands="reads",
        numeric_short=numeric_short,
        folder_check=repository_effects,
        summary=summary or "operands: revisions and paths (checked as paths read)",
    )


STATUS = _git(
    flag("-s", "--short"), flag("-b", "--branch"), flag("--show-stash"), optional("--porcelain"), flag("--long"),
    flag("-v", "--verbose"), optional("-u", "--untracked-files"), optional("--ignore-submodules"),
    optional("--ignored"), flag("-z"), optional("--column"), flag("--no-column"), flag("--ahead-behind"),
    flag("--no-ahead-behind"), flag("--renames"), flag("--no-renames"), optional("--find-renames"),
    summary="operands: paths",
)

BLAME = _git(
    flag("-b"), flag("--root"), flag("--show-stats"), value("-L"), flag("-l"), flag("-t"), value("-S", role="reads"),
    flag("--reverse"), flag("--first-parent"), flag("-p", "--porcelain"), flag("--line-porcelain"),
    flag("--incremental"), value("--encoding"), value("--contents", role="reads"), value("--date"),
    flag("--progress"), flag("--no-progress"), optional("-M"), optional("-C"), value("--ignore-rev"),
    value("--ignore-revs-file", role="reads"), flag("--color-lines"), flag("--color-by-age"), flag("-h"), flag("-c"),
    flag("--score-debug"), flag("-f", "--show-name"), flag("-n", "--show-number"), flag("-s"),
    flag("-e", "--show-email"), flag("-w"), optional("--abbrev"), value("--output", role="writes"),
)

LS_FILES = _git(
    flag("-c", "--cached"), flag("-d", "--deleted"), flag("-m", "--modified"), flag("-o", "--others"),
    flag("-i", "--ignored"), flag("-s", "--stage"), flag("--directory"), flag("--no-empty-directory"),
    flag("-u", "--unmerged"), flag("-k", "--killed"), flag("-z"), flag("--deduplicate"), value("-x", "--exclude"),
    value("-X", "--exclude-from", role="reads"), value("--exclude-per-directory"), flag("--exclude-standard"),
    flag("--error-unmatch"), value("--with-tree"), flag("-t"), flag("-v"), flag("-f"), flag("--full-name"),
    optional("--abbrev"), flag("--debug"), flag("--eol"), flag("--sparse"), value("--format"),
    summary="operands: paths; not `--recurse-submodules`",
)

LS_TREE = _git(
    flag("-d"), flag("-r"), flag("-t"), flag("-l", "--long"), flag("-z"), flag("--name-only"), flag("--name-status"),
    flag("--object-only"), optional("--abbrev"), flag("--full-name"), flag("--full-tree"), value("--format"),
)

REV_PARSE = _git(
    flag("--verify"), flag("-q", "--quiet"), flag("--sq"), optional("--short"), flag("--not"),
    optional("--abbrev-ref"), flag("--symbolic"), flag("--symbolic-full-name"), flag("--all"),
    optional("--branches"), optional("--tags"), optional("--remotes"), value("--glob"), value("--exclude"),
    value("--disambiguate"), flag("--local-env-vars"), value("--path-format"), flag("--git-dir"),
    flag("--git-common-dir"), value("--resolve-git-dir", role="reads"), value("--git-path"),
    flag("--show-toplevel"), flag("--show-superproject-working-tree"), flag("--shared-index-path"),
    flag("--absolute-git-dir"), flag("--is-inside-git-dir"), flag("--is-inside-work-tree"),
    flag("--is-bare-repository"), flag("--is-shallow-repository"), flag("--show-cdup"), flag("--show-prefix"),
    optional("--show-object-format"), value("--since"), value("--after"), value("--until"), value("--before"),
    flag("--revs-only"), flag("--no-revs"), flag("--flags"), flag("--no-flags"), value("--default"),
    value("--prefix"), flag("--keep-dashdash"), flag("--stop-at-non-option"), flag("--stuck-long"),
    summary="operands: revisions and paths; not `--parseopt`, `--sq-quote`",
)

DESCRIBE = _git(
    optional("--dirty"), optional("--broken"), flag("--all"), flag("--tags"), flag("--contains"),
    optional("--abbrev"), value("--candidates"), flag("--exact-match"), flag("--debug"), flag("--long"),
    value("--match"), value("--exclude"), flag("--always"), flag("--first-parent"),
)

SHORTLOG = _git(
    *REVISIONS, flag("-n", "--numbered"), flag("-s", "--summary"), flag("-e", "--email"),
    optional("--format", check=_format), value("--date"), value("--group", check=_format), flag("-c", "--committer"),
    optional("-w"), value("--output", role="writes"),
    numeric_short=True,
)

LOG = _git(*REVISIONS, *DIFF_OUTPUT, *LOG_FORMAT, numeric_short=True)
SHOW = LOG

DIFF = _git(
    *DIFF_OUTPUT, flag("--cached"), flag("--staged"), flag("--merge-base"), flag("--no-index"),
    flag("-1", "--base"), flag("-2", "--ours"), flag("-3", "--theirs"), flag("-0"),
)

GIT = Program(
    name="git",
    global_options=GLOBAL,
    subcommands={
        "status": STATUS,
        "blame": BLAME,
        "ls-files": LS_FILES,
        "ls-tree": LS_TREE,
        "rev-parse": REV_PARSE,
        "describe": DESCRIBE,
        "shortlog": SHORTLOG,
        "log": LOG,
        "diff": DIFF,
        "show": SHOW,
    },
    about=(
        "before the subcommand only -P/--no-pager, --no-optional-locks and the pathspec switches; "
        "every subcommand reads its repository and runs what its configuration names"
    ),
)
