"""Where a run works and with what: Airflow Variables and Connections, read when a task runs, never at parse
(docs/airflow.md, "Settings"): ``kafka_segments_lake``, ``kafka_segments_config``,
``kafka_segments_offsets_source``, ``kafka_segments_engine``, and the ``aws_default`` and ``spark_default``
Connections.

The library reads the standard ``AWS_*`` environment, so a task applies the connection by setting those
variables for the duration of its work (``lake_store``), and the Spark step passes them to ``spark-submit``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafka_segments.errors import LocatedError

if TYPE_CHECKING:
    from kafka_segments.config import Config
    from kafka_segments.storage.base import ObjectStore

LAKE_VARIABLE = "kafka_segments_lake"
CONFIG_VARIABLE = "kafka_segments_config"
OFFSETS_SOURCE_VARIABLE = "kafka_segments_offsets_source"
ENGINE_VARIABLE = "kafka_segments_engine"
SPARK_ENGINE = "spark"
INLINE_ENGINE = "inline"
ENGINES = (SPARK_ENGINE, INLINE_ENGINE)
"""Where the maintenance DAG's ``spark_retention`` task runs the retention step: ``spark`` (the default, a
Spark job through ``spark-submit``) or ``inline`` (in the task's own process, as ``run --engine inline``)."""
AWS_CONN_ID = "aws_default"
PROVIDER_EXTRA_KEYS = ("role_arn", "assume_role_method", "profile_name")
"""Extra fields only the Amazon provider's ``AwsBaseHook`` can resolve (STS, web identity, profiles)."""
SPARK_CONN_ID = "spark_default"


class SettingsError(LocatedError):
    """A required Airflow Variable or Connection is missing or unusable (``location`` names it)."""


@dataclass(frozen=True, slots=True)
class LakeSettings:
    """The run's lake, configuration and default offsets source (no secrets: safe in XCom)."""

    lake: str
    config_path: str | None = None
    offsets_source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"lake": self.lake, "config_path": self.config_path, "offsets_source": self.offsets_source}

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> LakeSettings:
        return cls(
            lake=str(document["lake"]),
            config_path=_optional_text(document.get("config_path")),
            offsets_source=_optional_text(document.get("offsets_source")),
        )


@dataclass(frozen=True, slots=True)
class AwsSettings:
    """The ``aws_default`` connection as the standard AWS settings."""

    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None
    endpoint_url: str | None = None
    region_name: str | None = None

    def environ(self) -> dict[str, str]:
        """The ``AWS_*`` environment variables these settings stand for (unset ones left out)."""
        pairs = {
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_SESSION_TOKEN": self.session_token,
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_DEFAULT_REGION": self.region_name,
            "AWS_REGION": self.region_name,
        }
        return {name: value for name, value in pairs.items() if value}


def read_lake_settings() -> LakeSettings:
    """The Variables of the run. Raises ``SettingsError`` when ``kafka_segments_lake`` is unset or empty."""
    from airflow.sdk import Variable

    lake = _optional_text(Variable.get(LAKE_VARIABLE, default=None))
    if lake is None:
        raise SettingsError(
            "the lake is not configured: set it to s3://bucket/prefix or a local path "
            "(or the environment variable AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE)",
            location=f"Airflow Variable {LAKE_VARIABLE}",
        )
    return LakeSettings(
        lake=lake,
        config_path=_optional_text(Variable.get(CONFIG_VARIABLE, default=None)),
        offsets_source=_optional_text(Variable.get(OFFSETS_SOURCE_VARIABLE, default=None)),
    )


def read_engine() -> str:
    """The Variable ``kafka_segments_engine`` (``spark`` when unset or empty). Raises ``SettingsError`` for a
    value that is not one of ``ENGINES``."""
    from airflow.sdk import Variable

    engine = (_optional_text(Variable.get(ENGINE_VARIABLE, default=None)) or SPARK_ENGINE).lower()
    if engine not in ENGINES:
        raise SettingsError(
            f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}",
            location=f"Airflow Variable {ENGINE_VARIABLE}",
        )
    return engine


def read_aws_settings() -> AwsSettings | None:
    """The ``aws_default`` connection, ``None`` when it does not exist (the worker's AWS settings apply)."""
    from airflow.sdk import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        connection = Connection.get(AWS_CONN_ID)
    except AirflowNotFoundException:
        return None
    extra = connection.extra_dejson
    if not isinstance(extra, dict):
        raise SettingsError("its extra must be a JSON object", location=f"Airflow Connection {AWS_CONN_ID}")
    static = AwsSettings(
        access_key_id=_optional_text(connection.login),
        secret_access_key=_optional_text(connection.password),
        session_token=_optional_text(extra.get("aws_session_token")),
        endpoint_url=_optional_text(extra.get("endpoint_url")),
        region_name=_optional_text(extra.get("region_name")),
    )
    if not any(extra.get(key) for key in PROVIDER_EXTRA_KEYS):
        return static
    return _provider_settings(static)


def _provider_settings(static: AwsSettings) -> AwsSettings:
    """The connection resolved by the Amazon provider (assume-role, web identity, a profile): its temporary
    credentials, frozen for this task (masked in the task's log), with the connection's endpoint and region.

    Raises:
        SettingsError: the provider is not installed, or it could not get credentials.
    """
    location = f"Airflow Connection {AWS_CONN_ID}"
    try:
        from airflow.providers.amazon.aws.hooks.base_aws import AwsBaseHook  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise SettingsError(
            f"its extra names one of {', '.join(PROVIDER_EXTRA_KEYS)}, which needs the Amazon provider "
            "(apache-airflow-providers-amazon, in requirements.lock) on the workers",
            location=location,
        ) from None
    from airflow.sdk.log import mask_secret

    hook = AwsBaseHook(aws_conn_id=AWS_CONN_ID, client_type="s3")
    try:
        credentials = hook.get_credentials(region_name=static.region_name)
    except Exception as exc:  # botocore's and the provider's errors alike: say which connection
        raise SettingsError(
            f"the Amazon provider could not get credentials: {exc}", location=location
        ) from exc
    for secret in (credentials.secret_key, credentials.token):
        if secret:
            mask_secret(secret)
    return AwsSettings(
        access_key_id=credentials.access_key,
        secret_access_key=credentials.secret_key,
        session_token=credentials.token,
        endpoint_url=static.endpoint_url,
        region_name=static.region_name,
    )


def aws_environ() -> dict[str, str]:
    """The ``AWS_*`` variables of the ``aws_default`` connection (empty without one)."""
    settings = read_aws_settings()
    return {} if settings is None else settings.environ()


@contextmanager
def patched_environ(values: Mapping[str, str]) -> Iterator[None]:
    """Set ``values`` in ``os.environ`` and restore the previous values afterwards."""
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def lake_store(lake: str) -> Iterator[ObjectStore]:
    """The lake's object store, with the ``aws_default`` connection applied while the block runs (an S3
    store builds its client on first use: use the store inside the block only)."""
    from kafka_segments.storage.uri import open_store

    with patched_environ(aws_environ()):
        yield open_store(lake)


def load_run_config(config_path: str | None) -> Config:
    """The YAML configuration at ``config_path`` (``ConfigError`` if it is not valid), or Kafka's defaults."""
    from kafka_segments.config import Config, load_config

    return Config.default() if config_path is None else load_config(config_path)


def _optional_text(value: object) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None
