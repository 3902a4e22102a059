#!/usr/bin/env bash
# Creates, or updates, the Cloud Scheduler job that starts a bowline night
# on Dataflow: an HTTP POST, authorised by an OAuth token of SCHEDULER_SA,
# to Cloud Run's jobs/RUN_JOB:run, which starts one execution of the Cloud
# Run job that runs the launcher image (reindex). reindex submits the
# Dataflow job, waits for it, gates the run and publishes it. The night's
# flags travel in the request (they replace the Cloud Run job's arguments),
# so this script is where they are set. (A Flex Template launch cannot run
# a night: Dataflow returns before the job ran, and reindex refuses it.)
#
#   PROJECT=my-project REGION=europe-west1 SCHEDULER_SA=bowline-scheduler@my-project.iam.gserviceaccount.com \
#   INPUT=gs://my-images/corpus/labels.csv ROOT=gs://my-index/bowline STAGING_BUCKET=my-dataflow \
#   LABEL_COLUMN=category VOCAB=10000 LEARNERS=solis-ada,oasis-diag \
#     infra/schedule/cloud-scheduler.sh
#
# Environment:
#   PROJECT, REGION      the Google Cloud project and region (required)
#   SCHEDULER_SA         the identity the scheduler calls Cloud Run as (required):
#                        roles/run.developer on RUN_JOB (running a job with overrides of
#                        its arguments needs run.jobs.runWithOverrides, which
#                        roles/run.invoker lacks)
#   INPUT, ROOT          the corpus and the index root, gs:// (required)
#   STAGING_BUCKET       Dataflow's staging and temp files, gs://STAGING_BUCKET/{staging,temp} (required)
#   LABEL_COLUMN, VOCAB, LEARNERS
#                        reindex's --label_column, --vocab and --learners (default: reindex's)
#   EXTRA_ARGS           further reindex flags, --name=value separated by spaces
#                        (e.g. "--max_map_drop=0.02 --keep=7 --learner_params=solis-ada.lambda=1e-5")
#   WORKER_SA            the Dataflow workers' account (default bowline-worker@PROJECT.iam.gserviceaccount.com)
#   MAX_WORKERS          autoscaling ceiling (default 16)
#   MACHINE_TYPE         worker machine type (default n2-standard-4)
#   MEMORY_LIMIT         each worker's soft memory limit, reindex's --memory_limit (default 10GiB,
#                        for n2-standard-4's 16 GB less Dataflow's own processes: set it with MACHINE_TYPE)
#   RUN_JOB              the Cloud Run job (default bowline-reindex)
#   JOB                  the scheduler job's name (default bowline-nightly)
#   SCHEDULE, TIME_ZONE  cron schedule (default "0 2 * * *") and its zone (default Etc/UTC)
set -euo pipefail

: "${PROJECT:?set PROJECT to the Google Cloud project}"
: "${REGION:?set REGION, e.g. europe-west1}"
: "${SCHEDULER_SA:?set SCHEDULER_SA to the service account Cloud Scheduler calls Cloud Run as}"

if [[ "${TARGET:-cloud-run}" != cloud-run ]]; then
  echo "cloud-scheduler.sh: TARGET=${TARGET}: a night runs only as the Cloud Run job (a Flex Template launch returns before the job runs, so it cannot gate or publish; reindex refuses it)" >&2
  exit 2
fi
: "${INPUT:?set INPUT to the corpus, gs://…/labels.csv or an image directory}"
: "${ROOT:?set ROOT to the index root, gs://…}"
: "${STAGING_BUCKET:?set STAGING_BUCKET to the bucket of the Dataflow staging and temp files}"

job=${JOB:-bowline-nightly}
run_job=${RUN_JOB:-bowline-reindex}
worker_sa=${WORKER_SA:-bowline-worker@$PROJECT.iam.gserviceaccount.com}
max_workers=${MAX_WORKERS:-16}
if [[ ! "$max_workers" =~ ^[0-9]+$ ]]; then
  echo "cloud-scheduler.sh: MAX_WORKERS=$max_workers is not a number" >&2
  exit 2
fi

args=(
  "--input=$INPUT" "--root=$ROOT"
  --runner=dataflow "--project=$PROJECT" "--region=$REGION"
  "--staging_location=gs://$STAGING_BUCKET/staging" "--temp_location=gs://$STAGING_BUCKET/temp"
  "--service_account_email=$worker_sa" "--max_num_workers=$max_workers"
  "--worker_machine_type=${MACHINE_TYPE:-n2-standard-4}" "--memory_limit=${MEMORY_LIMIT:-10GiB}"
)
if [[ -n "${LABEL_COLUMN:-}" ]]; then args+=("--label_column=$LABEL_COLUMN"); fi
if [[ -n "${VOCAB:-}" ]]; then args+=("--vocab=$VOCAB"); fi
if [[ -n "${LEARNERS:-}" ]]; then args+=("--learners=$LEARNERS"); fi
if [[ -n "${EXTRA_ARGS:-}" ]]; then
  read -r -a extra <<<"$EXTRA_ARGS"
  for a in "${extra[@]}"; do
    if [[ "$a" != --?*=* ]]; then
      echo "cloud-scheduler.sh: EXTRA_ARGS: $a is not --name=value" >&2
      exit 2
    fi
    args+=("$a")
  done
fi

# The body is JSON written from shell values: refuse the characters that
# would need escaping rather than escape them.
list=
for a in "${args[@]}" "$job" "$run_job"; do
  if [[ "$a" == *[\"\\]* ]]; then
    echo "cloud-scheduler.sh: $a holds a quote or a backslash" >&2
    exit 2
  fi
done
for a in "${args[@]}"; do
  list+="${list:+, }\"$a\""
done
body=$(mktemp)
trap 'rm -f "$body"' EXIT
# containerOverrides' args replace the Cloud Run job's own arguments.
cat >"$body" <<JSON
{"overrides": {"containerOverrides": [{"args": [$list]}]}}
JSON

uri="https://run.googleapis.com/v2/projects/$PROJECT/locations/$REGION/jobs/$run_job:run"
# No retry: a retry could start a second execution beside the first (the
# publish lets only one of them win, but both would run).
common=(
  --project "$PROJECT" --location "$REGION"
  --schedule "${SCHEDULE:-0 2 * * *}" --time-zone "${TIME_ZONE:-Etc/UTC}"
  --uri "$uri" --http-method POST
  --message-body-from-file "$body"
  --oauth-service-account-email "$SCHEDULER_SA"
  --oauth-token-scope https://www.googleapis.com/auth/cloud-platform
  --attempt-deadline 180s --max-retry-attempts 0 --min-backoff 60s
)
if gcloud scheduler jobs describe "$job" --project "$PROJECT" --location "$REGION" >/dev/null 2>&1; then
  gcloud scheduler jobs update http "$job" "${common[@]}" --update-headers Content-Type=application/json
else
  gcloud scheduler jobs create http "$job" "${common[@]}" --headers Content-Type=application/json
fi
echo "scheduled: $job (${SCHEDULE:-0 2 * * *} ${TIME_ZONE:-Etc/UTC}) → $uri"
echo "run it now: gcloud scheduler jobs run $job --project $PROJECT --location $REGION"
