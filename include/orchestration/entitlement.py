"""Who may commit a delete-records run (docs/airflow.md, "Who may commit it"), checked by the task under every
auth manager (a DAG's ``access_control`` is read by the FAB auth manager only).

The Variable ``kafka_segments_delete_records_allowed`` lists user names and ``role:NAME``s (default
``role:ADMIN``), compared case-insensitively; dry runs are never refused. Roles are known for the
SimpleAuthManager only, from the worker's configuration (which must match the API server's)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kafka_segments.errors import LocatedError

ALLOWED_VARIABLE = "kafka_segments_delete_records_allowed"
ROLE_PREFIX = "role:"
DEFAULT_ALLOWED = "role:ADMIN"
SIMPLE_AUTH_MANAGER = "SimpleAuthManager"
_WHERE = f"Airflow Variable {ALLOWED_VARIABLE}"


class DeleteRecordsNotAllowedError(LocatedError):
    """A committing delete-records run was triggered by someone the setting does not allow (``location``
    names the setting)."""


@dataclass(frozen=True, slots=True)
class Allowed:
    """The users and roles that may commit (casefolded)."""

    users: frozenset[str]
    roles: frozenset[str]

    @classmethod
    def parse(cls, text: str | None) -> Allowed:
        """``user, role:NAME, ...``; blank: ``DEFAULT_ALLOWED``."""
        entries = [item.strip() for item in (text or "").split(",") if item.strip()]
        if not entries:
            entries = [DEFAULT_ALLOWED]
        roles = {item[len(ROLE_PREFIX) :].strip().casefold() for item in entries if _is_role(item)}
        users = {item.casefold() for item in entries if not _is_role(item)}
        return cls(users=frozenset(users), roles=frozenset(roles - {""}))

    def admits(self, user: str, roles: Iterable[str]) -> bool:
        return user.casefold() in self.users or any(role.casefold() in self.roles for role in roles)

    def describe(self) -> str:
        listed = sorted(self.users) + [f"{ROLE_PREFIX}{role}" for role in sorted(self.roles)]
        return ", ".join(listed)


def _is_role(entry: str) -> bool:
    return entry.casefold().startswith(ROLE_PREFIX)


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """What the worker's configuration says about users' roles."""

    auth_manager: str
    all_admins: bool = False
    simple_users: tuple[str, ...] = ()
    """``[core] simple_auth_manager_users`` entries (``user:ROLE`` or ``user:ROLE:teams``)."""

    def roles_of(self, user: str) -> frozenset[str]:
        """The user's roles as far as the task can know them (see the module docstring)."""
        if SIMPLE_AUTH_MANAGER not in self.auth_manager:
            return frozenset()
        if self.all_admins:
            return frozenset({"ADMIN"})
        roles = set()
        for entry in self.simple_users:
            parts = [part.strip() for part in entry.split(":")]
            if len(parts) >= 2 and parts[0].casefold() == user.casefold():
                roles.add(parts[1])
        return frozenset(roles)


def read_auth_config() -> AuthConfig:
    """The auth manager's settings from the worker's Airflow configuration."""
    from airflow.sdk import conf

    return AuthConfig(
        auth_manager=conf.get("core", "auth_manager", fallback=SIMPLE_AUTH_MANAGER),
        all_admins=conf.getboolean("core", "simple_auth_manager_all_admins", fallback=False),
        simple_users=tuple(conf.getlist("core", "simple_auth_manager_users", fallback=[]) or ()),
    )


def check_commit_allowed(user: str | None, *, allowed: Allowed, auth: AuthConfig) -> str:
    """``user`` when the setting admits them; raises ``DeleteRecordsNotAllowedError`` otherwise."""
    if not user:
        raise DeleteRecordsNotAllowedError(
            "a committing delete-records run needs the user who triggered it, and this run has none; "
            "trigger it from the UI or the REST API, or run it with dry_run on",
            location=_WHERE,
        )
    roles = auth.roles_of(user)
    if allowed.admits(user, roles):
        return user
    has = f"role {', '.join(sorted(roles))}" if roles else "no role known to the task"
    raise DeleteRecordsNotAllowedError(
        f"user {user!r} ({has}) may not commit a delete-records run: only {allowed.describe()} may; "
        "nothing was changed (a dry run needs no permission)",
        location=_WHERE,
    )


def require_commit_permission(user: str | None) -> str:
    """The task's check: the Variable (unset: admins only) against the triggering user."""
    from airflow.sdk import Variable

    allowed = Allowed.parse(Variable.get(ALLOWED_VARIABLE, default=None))
    return check_commit_allowed(user, allowed=allowed, auth=read_auth_config())
