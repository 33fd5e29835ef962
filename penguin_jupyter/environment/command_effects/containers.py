"""Option tables of docker's and kubectl's reading subcommands (docs/security.md "What a rule
covers").

Checked against `--help` of docker 28 and kubectl 1.32 (Go flags: `-n value`, `-n=value`,
`--flag=false`). Roles worth knowing:

* docker: `--config` loads a client config folder (the credential helpers it names run), `-H`
  reaches another daemon, the TLS files are read; `docker inspect` prints a container's
  environment, where passwords often live (role "secrets"); contexts are left out (unknown).
* kubectl: `--kubeconfig` loads a kubeconfig (its exec plugins run), `--server` sends your
  credentials to another API server, `--cache-dir` writes, the certificate files are read,
  `--insecure-skip-tls-verify` talks to a server unchecked; `kubectl get secrets` (or any
  resource or `--raw` path naming secrets) prints credentials; `-f`/`-k`/`-R` (a manifest names
  the objects to fetch), `-v`, `--token`, `--username`/`--password` and impersonation are left
  out. The subcommands are kubectl's own, so no `kubectl-<name>` plugin runs.
"""

from __future__ import annotations

from .tables import Command, Program, Role, flag, value


def _secrets(text: str) -> tuple[Role, str] | None:
    """A resource list or API path that names secrets (`secrets`, `secret/x`, `pods,secrets`)."""
    return ("secrets", "Secrets from the cluster") if "secret" in text.lower() else None


def _output_file(text: str) -> tuple[Role, str] | None:
    """`-o go-template-file=<file>` (and jsonpath-file, custom-columns-file, templatefile) reads it."""
    kind, equals, path = text.partition("=")
    return ("reads", path) if equals and kind.endswith("file") else None


DOCKER_GLOBAL = (
    value("--config", role="loads", what="a docker client config"), flag("-D", "--debug"),
    value("-H", "--host", role="network", what="another docker daemon"), value("-l", "--log-level"),
    flag("--tls"), value("--tlscacert", role="reads"), value("--tlscert", role="reads"),
    value("--tlskey", role="reads"), flag("--tlsverify"), flag("-v", "--version"), flag("--help"),
)
_FORMAT = value("-f", "--format")

DOCKER = Program(
    name="docker",
    style="pflag",
    global_options=DOCKER_GLOBAL,
    subcommands={
        "ps": Command(
            options=(flag("-a", "--all"), value("-f", "--filter"), value("--format"), value("-n", "--last"),
                     flag("-l", "--latest"), flag("--no-trunc"), flag("-q", "--quiet"), flag("-s", "--size")),
            operands="none",
            summary="no operands",
        ),
        "images": Command(
            options=(flag("-a", "--all"), flag("--digests"), value("-f", "--filter"), value("--format"),
                     flag("--no-trunc"), flag("-q", "--quiet"), flag("--tree")),
            operands="plain",
            summary="operands: a repository[:tag]",
        ),
        "inspect": Command(
            options=(_FORMAT, flag("-s", "--size"), value("--type")),
            operands="plain",
            inherent=(("secrets", "a container's environment (passwords often live there)"),),
            summary="operands: object names; always shows a container's environment (never covered by naming)",
        ),
        "version": Command(options=(_FORMAT,), operands="none", summary="no operands"),
        "info": Command(options=(_FORMAT,), operands="none", summary="no operands"),
    },
    about="before the subcommand: --config (loads), -H (network), TLS files (read), -D, -l; not -c/--context",
)

KUBECTL_GLOBAL = (
    value("--kubeconfig", role="loads", what="a kubeconfig (its exec plugins run)"),
    value("-s", "--server", role="network", what="another API server (your credentials go with it)"),
    flag("--insecure-skip-tls-verify", role="network", what="an API server whose certificate is not checked"),
    value("--certificate-authority", role="reads"), value("--client-certificate", role="reads"),
    value("--client-key", role="reads"), value("--cache-dir", role="writes"), value("-n", "--namespace"),
    value("--context"), value("--cluster"), value("--user"), value("--request-timeout"),
    flag("--match-server-version"), flag("--warnings-as-errors"), flag("--disable-compression"),
    value("--tls-server-name"), value("--log-flush-frequency"), flag("-h", "--help"),
)
_SELECT = (flag("-A", "--all-namespaces"), value("-l", "--selector"), value("--field-selector"), value("--chunk-size"))
_OUTPUT = value("-o", "--output", check=_output_file)

KUBECTL = Program(
    name="kubectl",
    style="pflag",
    global_options=KUBECTL_GLOBAL,
    globals_after_subcommand=True,
    subcommands={
        "get": Command(
            options=(
                *_SELECT, flag("--allow-missing-template-keys"), flag("--ignore-not-found"),
                value("-L", "--label-columns"), flag("--no-headers"), _OUTPUT, flag("--output-watch-events"),
                value("--raw", check=_secrets), flag("--server-print"), flag("--show-kind"), flag("--show-labels"),
                flag("--show-managed-fields"), value("--sort-by"), value("--subresource"),
                value("--template", role="reads"), flag("-w", "--watch"), flag("--watch-only"),
            ),
            operands="plain",
            operand_check=_secrets,
            summary="operands: resources (naming secrets shows credentials); not -f, -k, -R",
        ),
        "describe": Command(
            options=(*_SELECT, flag("--show-events")),
            operands="plain",
            summary="operands: resources; not -f, -k, -R",
        ),
        "logs": Command(
            options=(
                flag("--all-containers"), flag("--all-pods"), value("-c", "--container"), flag("-f", "--follow"),
                flag("--ignore-errors"), value("--limit-bytes"), value("--max-log-requests"),
                value("--pod-running-timeout"), flag("--prefix"), flag("-p", "--previous"), value("-l", "--selector"),
                value("--since"), value("--since-time"), value("--tail"), flag("--timestamps"),
            ),
            operands="plain",
            summary="operands: a pod (and container)",
        ),
        "version": Command(options=(flag("--client"), _OUTPUT), operands="none", summary="no operands"),
        "top": Command(
            options=(*_SELECT, flag("--containers"), flag("--no-headers"), value("--sort-by"), flag("--sum"),
                     flag("--use-protocol-buffers"), flag("--show-capacity")),
            operands="plain",
            summary="operands: pod or node, and names",
        ),
        "explain": Command(
            options=(value("--api-version"), _OUTPUT, flag("--recursive")),
            operands="plain",
            summary="operands: a resource field path",
        ),
    },
    about="global options anywhere: --kubeconfig (loads), --server (network), certificate files (read), --cache-dir (writes)",
)
