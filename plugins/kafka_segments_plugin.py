"""The lake view in Airflow's UI (docs/lake-view.md, docs/airflow.md "The lake view"): the page of the lake
the DAGs maintain, served by Airflow's own API server under ``/kafka-segments/`` behind its login, and a
link to it in the navigation (Browse), and the maintenance DAG's task instances' extra links to their lake
run's report, validation page and Data Docs (``orchestration.lake_run_links``). This file only declares
(and stays cheap to import: every Airflow component imports it); ``orchestration.lake_view_app`` builds the
app and renders the page on request."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin
from orchestration.lake_run_links import run_file_links
from orchestration.lake_view_app import TITLE, URL_PREFIX, LakeViewApp


class KafkaSegmentsPlugin(AirflowPlugin):
    name = "kafka_segments"
    global_operator_extra_links = run_file_links()
    fastapi_apps = [{"app": LakeViewApp(), "url_prefix": URL_PREFIX, "name": TITLE}]  # noqa: RUF012
    external_views = [  # noqa: RUF012
        {
            "name": "Kafka segments lake",
            "href": URL_PREFIX + "/",
            "destination": "nav",
            "category": "browse",
            "url_route": "kafka-segments-lake",
        }
    ]
