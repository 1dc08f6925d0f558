"""Write the docker-compose stack's ``.env``: a fresh Fernet key, API secret key and JWT secret.

    python3 scripts/compose_env.py [--output PATH]     # default: .env next to docker-compose.yaml

Standard library only (it runs before anything is installed). An existing file is never overwritten: the
Fernet key encrypts what the metadata database already holds. The variables are the ones ``.env.example``
documents and ``docker-compose.yaml`` requires.
"""

from __future__ import annotations

import argparse
import base64
import os
import secrets
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def fernet_key() -> str:
    """32 random bytes, url-safe base64: what ``cryptography.fernet.Fernet.generate_key()`` makes."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


def env_text() -> str:
    return (
        "# scripts/compose_env.py: this deployment's Airflow keys (.env.example); keep it secret.\n"
        f"AIRFLOW_FERNET_KEY={fernet_key()}\n"
        f"AIRFLOW_API_SECRET_KEY={secrets.token_urlsafe(32)}\n"
        f"AIRFLOW_JWT_SECRET={secrets.token_urlsafe(32)}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=PROJECT / ".env")
    args = parser.parse_args(argv)
    try:
        with args.output.open("x", encoding="utf-8") as out:  # "x": never replace existing keys
            os.chmod(args.output, 0o600)
            out.write(env_text())
    except FileExistsError:
        print(f"{args.output} already exists; left as it is (delete it to make new keys)", file=sys.stderr)
        return 1
    print(f"wrote {args.output} (Fernet key, API secret key, JWT secret)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
