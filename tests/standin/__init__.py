"""A local stand-in for GitHub's REST API, backed by ``LocalGitHub`` over a git repository.

``StandIn`` runs it in a thread of the test process; ``python -m tests.standin`` runs it as its own
process and prints the chosen port on its first stdout line. See ``docs/github.md``.
"""

from tests.standin.server import (
    Fault,
    Pacing,
    StandIn,
    StandInState,
    create_app,
    generate_private_key_pem,
)

__all__ = ["Fault", "Pacing", "StandIn", "StandInState", "create_app", "generate_private_key_pem"]
