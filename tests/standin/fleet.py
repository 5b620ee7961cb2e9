"""Many repositories behind one stand-in GitHub: one pull request each, spread over a few
installations.

The stand-in (``server.py``) serves one repository with one pull request. A ``Fleet`` serves many
from one HTTP server: each repository is a stand-in of its own (its ``LocalGitHub``, check runs,
reviews, comments) while what GitHub keeps per App or per installation is shared: installation
tokens, the request log, faults, and the write pacing log, one ``Pacing`` per installation (GitHub's
advice is per installation). Requests are routed by the repository in their path
(``/repos/{owner}/{name}/...``), a GraphQL query by its ``owner``/``name`` variables, a token
request by its installation.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterable
from typing import Any

from werkzeug.serving import make_server

from bot.github.local import LocalGitHub
from tests.standin.server import (
    Pacing,
    QuietHandler,
    ServedInThread,
    StandInState,
    create_app,
    generate_private_key_pem,
)

Environ = dict[str, Any]
WSGIApp = Callable[[Environ, Callable[..., Any]], Iterable[bytes]]


class Fleet(ServedInThread):
    """``repos`` maps ``owner/name`` to its installation id; every repository's pull request is
    ``head`` against ``base`` of the git repository at ``repo_path``, numbered from
    ``first_number``."""

    def __init__(
        self,
        repo_path: str,
        base: str,
        head: str,
        repos: dict[str, int],
        *,
        latency: float = 0.0,
        write_pause: float = 0.0,
        first_number: int = 1,
        private_key_pem: str | None = None,
    ) -> None:
        self.private_key_pem = private_key_pem or generate_private_key_pem()
        self.pacing = {
            installation: Pacing(write_pause) for installation in sorted(set(repos.values()))
        }
        shared: dict[str, Any] = {
            "tokens": {},
            "token_installations": {},
            "faults": [],
            "fault_hits": [],
            "requests": [],
            "lock": threading.Lock(),
            "hook": {},
            "deliveries": [],
            # recorded: for the conformance check
            "payloads": {},
            "recorded": [],
        }
        self.states: dict[str, StandInState] = {}
        for number, (name, installation) in enumerate(sorted(repos.items()), start=first_number):
            local = LocalGitHub(repo_path, base, head, repo=name, number=number)
            self.states[name] = StandInState(
                local,
                self.private_key_pem,
                installation_id=installation,
                latency=latency,
                pacing=self.pacing[installation],
                **shared,
            )
        self.apps: dict[str, WSGIApp] = {
            name: create_app(state) for name, state in self.states.items()
        }

    def number(self, repo: str) -> int:
        return self.states[repo].local.number

    def head_sha(self, repo: str) -> str:
        return self.states[repo].local.resolve(self.states[repo].local.head)

    def __call__(self, environ: Environ, start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        parts = path.split("/")
        name = ""
        if path.startswith("/repos/") and len(parts) > 3:
            name = f"{parts[2]}/{parts[3]}"
        elif path == "/graphql":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            try:
                variables = json.loads(body).get("variables") or {}
                name = f"{variables.get('owner')}/{variables.get('name')}"
            except (ValueError, AttributeError):
                name = ""
        elif path.startswith("/app/installations/") and len(parts) > 3 and parts[3].isdigit():
            name = next(
                (n for n, s in self.states.items() if s.installation_id == int(parts[3])), ""
            )
        elif path == "/app/installations" and environ.get("REQUEST_METHOD") == "GET":
            return self._answer(
                environ,
                start_response,
                [
                    {
                        "id": i,
                        "account": {
                            "login": next(
                                n for n, s in self.states.items() if s.installation_id == i
                            ).split("/")[0]
                        },
                        "app_id": 1,
                        "repository_selection": "selected",
                    }
                    for i in sorted(self.pacing)
                ],
            )
        elif path == "/installation/repositories":
            token = str(environ.get("HTTP_AUTHORIZATION", "")).split(" ")[-1]
            installation = next(iter(self.states.values())).token_installations.get(token)
            mine = [n for n, s in self.states.items() if s.installation_id == installation]
            return self._answer(
                environ,
                start_response,
                {
                    "total_count": len(mine),
                    "repository_selection": "selected",
                    "repositories": [{"full_name": n, "name": n.split("/")[1]} for n in mine],
                },
                mine[0] if mine else "",
            )
        app = self.apps.get(name) or next(iter(self.apps.values()))  # unknown repositories: its 404
        return app(environ, start_response)

    def _answer(
        self, environ: Environ, start_response: Callable[..., Any], body: Any, name: str = ""
    ) -> Iterable[bytes]:
        """What GitHub answers for the App or an installation as a whole (all repositories, not
        one): one repository's stand-in checks the credentials and logs the request, the fleet
        writes the body."""
        answered: dict[str, Any] = {}

        def keep(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Callable[[bytes], None]:
            answered.update(status=status, headers=headers)
            return lambda _: None

        app = self.apps.get(name) or next(iter(self.apps.values()))
        own = b"".join(app(environ, keep))
        if not str(answered["status"]).startswith("200"):
            start_response(answered["status"], answered["headers"])
            return [own]
        data = json.dumps(body).encode()
        headers = [(k, v) for k, v in answered["headers"] if k.lower() != "content-length"]
        start_response(answered["status"], [*headers, ("Content-Length", str(len(data)))])
        return [data]

    def start(self, host: str = "127.0.0.1", port: int = 0) -> Fleet:
        self._serve(
            make_server(host, port, self, threaded=True, request_handler=QuietHandler), "fleet"
        )
        return self

    def stop(self) -> None:
        """Stop serving; what the fleet was sent and answered must be what GitHub's descriptions
        allow."""
        from tests import conformance

        self._stop_serving()
        for state in self.states.values():
            state.local.close()
        recorded = next(iter(self.states.values())).recorded if self.states else None
        drift = conformance.check_end_to_end(list(recorded or ()), probes=True)
        if recorded is not None:
            recorded.clear()
        assert not drift, (
            "requests, answers or payloads GitHub's descriptions do not allow:\n" + "\n".join(drift)
        )
