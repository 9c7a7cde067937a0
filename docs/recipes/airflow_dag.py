"""Run an ldp dataset config from Apache Airflow 3, one data interval at a time.

Each DAG run publishes its data interval exactly once: the window is the run's data interval,
the run id names the task instance (the same for every try), and the attempt is the try
number, so a later try fences an earlier one and a load that landed before an error is found
by its key and not written again. A backfill that Airflow starts finds the key of a done
interval on main and writes nothing.

CronDataIntervalTimetable gives each run the day it covers; a cron string as schedule would
give Airflow 3's runs an empty interval.
"""

import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import DAG
from airflow.timetables.interval import CronDataIntervalTimetable

CONFIG = "/srv/ldp/config/daily_orders.json"  # an absolute path the worker can read

with DAG(
    dag_id="daily_orders",
    schedule=CronDataIntervalTimetable("5 2 * * *", timezone="Europe/Paris"),
    start_date=pendulum.datetime(2026, 8, 1, tz="Europe/Paris"),
    catchup=True,
    max_active_runs=4,
) as dag:
    BashOperator(
        task_id="load_orders",
        bash_command=(
            "ldp run " + CONFIG
            + " --window {{ data_interval_start.isoformat() }}/{{ data_interval_end.isoformat() }}"
            + " --run-id 'airflow:{{ dag.dag_id }}:{{ run_id }}:{{ task.task_id }}'"
            + " --attempt {{ ti.try_number }}"
        ),
        # Exit 3 is a data gate: fix the data, do not retry.
        skip_on_exit_code=None,
        retries=3,
    )
