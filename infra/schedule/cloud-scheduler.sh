#!/usr/bin/env bash
# Creates, or updates, the Cloud Scheduler job that starts a bowline night
# on Dataflow: an HTTP POST authorised by an OAuth token of SCHEDULER_SA,
# either to Dataflow's flexTemplates:launch for the Flex Template
# (TARGET=flex, the default; infra/dataflow/build-template.sh) or to Cloud
# Run's jobs/RUN_JOB:run for a Cloud Run job running the launcher image,
# which waits for the Dataflow job and then gates and publishes
# (TARGET=cloud-run; infra/README.md says when to prefer it and how to
# create the job).
#
#   PROJECT=my-project REGION=europe-west1 TEMPLATE_BUCKET=my-templates \
#   INPUT=gs://my-images/corpus/labels.csv ROOT=gs://my-index/bowline \
#   SCHEDULER_SA=bowline-scheduler@my-project.iam.gserviceaccount.com \
#     infra/schedule/cloud-scheduler.sh
#
# Environment:
#   PROJECT, REGION      the Google Cloud project and region (required)
#   SCHEDULER_SA         the launching identity (required): with flex, roles/dataflow.developer
#                        and roles/iam.serviceAccountUser on WORKER_SA; with cloud-run,
#                        roles/run.invoker on RUN_JOB
#   TARGET               flex (default) or cloud-run
#   JOB                  the scheduler job's name, with flex the Dataflow job's too (default bowline-nightly)
#   SCHEDULE, TIME_ZONE  cron schedule (default "0 2 * * *") and its zone (default Etc/UTC)
# with TARGET=flex:
#   TEMPLATE_BUCKET      as for build-template.sh (required)
#   INPUT, ROOT          the corpus and the index root, gs:// (required)
#   WORKER_SA            launcher VM and workers (default bowline-worker@PROJECT.iam.gserviceaccount.com)
#   STAGING_BUCKET       staging and temp files (default TEMPLATE_BUCKET)
#   MAX_WORKERS          autoscaling ceiling (default 16)
# with TARGET=cloud-run:
#   RUN_JOB              the Cloud Run job (default bowline-reindex)
set -euo pipefail

: "${PROJECT:?set PROJECT to the Google Cloud project}"
: "${REGION:?set REGION, e.g. europe-west1}"
: "${SCHEDULER_SA:?set SCHEDULER_SA to the service account Cloud Scheduler launches as}"

job=${JOB:-bowline-nightly}
body=$(mktemp)
trap 'rm -f "$body"' EXIT

case "${TARGET:-flex}" in
flex)
  : "${TEMPLATE_BUCKET:?set TEMPLATE_BUCKET to the bucket that holds the template spec}"
  : "${INPUT:?set INPUT to the corpus, gs://…/labels.csv or an image directory}"
  : "${ROOT:?set ROOT to the index root, gs://…}"
  worker_sa=${WORKER_SA:-bowline-worker@$PROJECT.iam.gserviceaccount.com}
  staging=${STAGING_BUCKET:-$TEMPLATE_BUCKET}
  max_workers=${MAX_WORKERS:-16}
  # The body is JSON written from shell values: refuse the characters
  # that would need escaping rather than escape them.
  for v in "$INPUT" "$ROOT" "$worker_sa" "$staging" "$job" "$TEMPLATE_BUCKET"; do
    if [[ "$v" == *[\"\\]* ]]; then
      echo "cloud-scheduler.sh: $v holds a quote or a backslash" >&2
      exit 2
    fi
  done
  if [[ ! "$max_workers" =~ ^[0-9]+$ ]]; then
    echo "cloud-scheduler.sh: MAX_WORKERS=$max_workers is not a number" >&2
    exit 2
  fi
  uri="https://dataflow.googleapis.com/v1b3/projects/$PROJECT/locations/$REGION/flexTemplates:launch"
  # One fixed jobName: Dataflow refuses a second active job of the same
  # name, so a retried or doubled launch cannot start a second night
  # beside the first, and retrying is safe.
  retries=3
  cat >"$body" <<JSON
{
  "launchParameter": {
    "jobName": "$job",
    "containerSpecGcsPath": "gs://$TEMPLATE_BUCKET/templates/bowline-reindex.json",
    "parameters": {
      "input": "$INPUT",
      "root": "$ROOT"
    },
    "environment": {
      "serviceAccountEmail": "$worker_sa",
      "stagingLocation": "gs://$staging/staging",
      "tempLocation": "gs://$staging/temp",
      "maxWorkers": $max_workers
    }
  }
}
JSON
  ;;
cloud-run)
  # The night's flags are the Cloud Run job's arguments; the request
  # starts one execution of it. A retry could start a second execution
  # (the publish lets only one of them win, but both would run): none.
  uri="https://run.googleapis.com/v2/projects/$PROJECT/locations/$REGION/jobs/${RUN_JOB:-bowline-reindex}:run"
  retries=0
  echo '{}' >"$body"
  ;;
*)
  echo "cloud-scheduler.sh: TARGET must be flex or cloud-run, not ${TARGET}" >&2
  exit 2
  ;;
esac

common=(
  --project "$PROJECT" --location "$REGION"
  --schedule "${SCHEDULE:-0 2 * * *}" --time-zone "${TIME_ZONE:-Etc/UTC}"
  --uri "$uri" --http-method POST
  --message-body-from-file "$body"
  --oauth-service-account-email "$SCHEDULER_SA"
  --oauth-token-scope https://www.googleapis.com/auth/cloud-platform
  --attempt-deadline 180s --max-retry-attempts "$retries" --min-backoff 60s
)
if gcloud scheduler jobs describe "$job" --project "$PROJECT" --location "$REGION" >/dev/null 2>&1; then
  gcloud scheduler jobs update http "$job" "${common[@]}" --update-headers Content-Type=application/json
else
  gcloud scheduler jobs create http "$job" "${common[@]}" --headers Content-Type=application/json
fi
echo "scheduled: $job (${SCHEDULE:-0 2 * * *} ${TIME_ZONE:-Etc/UTC}) → $uri"
echo "run it now: gcloud scheduler jobs run $job --project $PROJECT --location $REGION"
