"""Secrets out of what is echoed: the password (or token) in the userinfo of ``scheme://user:password@host``.
Every message, log line and report field that can repeat a URI a user typed goes through ``redact_uri``
(``s3://KEY:***@bucket/p``, ``kafka://***@host:9092``); it works on any text."""

from __future__ import annotations

import re

# A password runs to the last ``@`` before a blank or a quote: one with an ``@`` in it is redacted whole.
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:@/\s'\"]*)(?P<password>:[^\s'\"]*)?@"
)


def redact_uri(text: str) -> str:
    """``text`` with the secret of every ``scheme://userinfo@`` replaced by ``***``: the password of
    ``user:password@`` (the user is kept), or the whole userinfo when it has no password."""
    return _USERINFO.sub(_redacted, text)


def _redacted(match: re.Match[str]) -> str:
    if match.group("password") is None:
        return f"{match.group('scheme')}***@"
    return f"{match.group('scheme')}{match.group('user')}:***@"
