"""`hinter serve`: a local web application over runs: the report, a findings browser with triage, and "try a
sentence" against the run's model."""
from __future__ import annotations

import signal
import socket
from pathlib import Path
from typing import Optional

import typer

from hinter.errors import InputError
from hinter.cli.app import app, console


@app.command("serve")
def serve_cmd(
    run_dirs: Optional[list[Path]] = typer.Argument(None, help="Output folders of `hinter run` or `hinter audit` "
                                                    "(an audit is served as its page; none: only try sentences, "
                                                    "on --model)."),
    model: Optional[str] = typer.Option(None, "--model", help="The model that tries sentences (default: each "
                                        "run's own, read from its settings), e.g. gguf:default."),
    host: str = typer.Option("127.0.0.1", "--host", help="Where to listen. Default: this machine only; any other "
                             "address lets others on the network read the runs' texts (a warning says so)."),
    port: int = typer.Option(8000, "--port", help="The port to listen on."),
) -> None:
    """Explore runs in the browser: the report with every bias filterable (attribute, group, combination, hidden),
    the original, each attribute changed alone and together side by side, why a change was discarded (tags and
    dependency labels aligned); try a sentence live; triage biases ("confirmed" / "not a bias", with a reason and
    an optional expiry date), saved in RUN_DIR/triage.json (commit it): `hinter check` and --fail-on then leave the
    dismissed biases out, and the report shows the share of reviewed flips confirmed. Open the printed address (it
    holds the token that writes need). Ctrl-C stops it. Examples:

    hinter serve runs/demo

    hinter serve runs/nightly runs/last-week --port 8080

    hinter serve runs/demo audits/screener      (a run, and an audit's page beside it)

    hinter serve --model gguf:default      (try sentences only, on the embedded model)

    curl -s -H "X-Hinter-Token: TOKEN" -d '{"text": "The white man is brilliant.", "attributes": ["race", "gender"], "order": 2}' http://127.0.0.1:8000/api/try
    """
    from hinter.serve.app import LOOPBACK, ApiError, create_app
    runs = list(run_dirs or [])
    if not runs and not model:
        raise InputError("nothing to serve", fix="Give a run folder (hinter serve runs/demo) or a model to try "
                         "sentences on (hinter serve --model gguf:default).")
    if not 0 <= port <= 65535:
        raise InputError(f"--port must be 0 to 65535, got {port}", where="--port")
    if host not in LOOPBACK:
        console.print(f"[yellow]warning:[/] listening on {host}: anyone who can reach this address can read the runs' "
                      "texts (writes still need the token). Use the default --host 127.0.0.1 unless you mean it.",
                      highlight=False, soft_wrap=True)
    try:  # a clear message rather than uvicorn's traceback when the port is taken
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
            s.bind((host.strip("[]"), port))
            port = port or s.getsockname()[1]
    except OSError as e:
        raise InputError(f"cannot listen on {host}:{port} ({e.strerror})", where="--port",
                         fix="Choose another --port (or stop what uses it).") from None
    application = create_app(runs, model, host=host)
    server = application.state.server
    console.print("Loading the parser and the model…", highlight=False)
    try:
        spec = server.warm(0 if runs else None)
        console.print(f"Try a sentence with: {spec}", highlight=False)
    except ApiError as e:
        console.print(f"[yellow]warning:[/] trying sentences is off: {e.error}. {e.fix or ''}", highlight=False,
                      soft_wrap=True)
    import uvicorn
    shown = f"[{host.strip('[]')}]" if ":" in host else host

    class _Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            if self.started:  # the address once it answers: opening it at once works
                console.print(f"hinter serve: http://{shown}:{port}/?token={server.token}  (Ctrl-C stops it)",
                              highlight=False, soft_wrap=True)
    # uvicorn handles Ctrl-C and SIGTERM itself (a clean shutdown) and raises the signal again afterwards: ignored
    # here, so the command ends with "Stopped." rather than the campaign's "Interrupted" message.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _Server(uvicorn.Config(application, host=host.strip("[]"), port=port, log_level="warning",
                                  lifespan="off", server_header=False)).run()
    console.print("Stopped.", highlight=False)
