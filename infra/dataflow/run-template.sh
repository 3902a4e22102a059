#!/usr/bin/env bash
# Launches one run of the bowline Flex Template (build-template.sh) on
# Dataflow and prints the job; extra template parameters follow as
# name=value arguments.
#
#   PROJECT=my-project REGION=europe-west1 TEMPLATE_BUCKET=my-templates \
#   INPUT=gs://my-images/corpus/labels.csv OUTPUT=gs://my-index/runs/manual-1 \
#     infra/dataflow/run-template.sh vocab=10000 learners=solis-ada,oasis-diag
#
# Environment:
#   PROJECT, REGION, TEMPLATE_BUCKET  as for build-template.sh (required)
#   INPUT, OUTPUT                     the corpus and the run's directory, gs:// (required)
#   STAGING_BUCKET                    staging and temp files (default TEMPLATE_BUCKET)
#   WORKER_SA                         service account of the launcher VM and the workers
#                                     (default bowline-worker@PROJECT.iam.gserviceaccount.com)
#   JOB_NAME                          (default bowline-<UTC time>)
#   MAX_WORKERS                       autoscaling ceiling (default 16)
#   MACHINE_TYPE                      worker machine type (default n2-standard-4)
set -euo pipefail

: "${PROJECT:?set PROJECT to the Google Cloud project}"
: "${REGION:?set REGION, e.g. europe-west1}"
: "${TEMPLATE_BUCKET:?set TEMPLATE_BUCKET to the bucket that holds the template spec}"
: "${INPUT:?set INPUT to the corpus, gs://…/labels.csv or an image directory}"
: "${OUTPUT:?set OUTPUT to the directory of the run, gs://…}"

staging=${STAGING_BUCKET:-$TEMPLATE_BUCKET}
worker_sa=${WORKER_SA:-bowline-worker@$PROJECT.iam.gserviceaccount.com}
job=${JOB_NAME:-bowline-$(date -u +%Y%m%d-%H%M%S)}

# ^~^ makes ~ the list separator, so a value may hold commas
# (learners=solis-ada,oasis-diag).
params=(--parameters "^~^input=$INPUT" --parameters "^~^output=$OUTPUT")
for p in "$@"; do
  if [[ "$p" != *=* ]]; then
    echo "run-template.sh: parameter $p: want name=value" >&2
    exit 2
  fi
  params+=(--parameters "^~^$p")
done

gcloud dataflow flex-template run "$job" \
  --project "$PROJECT" --region "$REGION" \
  --template-file-gcs-location "gs://$TEMPLATE_BUCKET/templates/bowline.json" \
  --staging-location "gs://$staging/staging" --temp-location "gs://$staging/temp" \
  --service-account-email "$worker_sa" \
  --max-workers "${MAX_WORKERS:-16}" --worker-machine-type "${MACHINE_TYPE:-n2-standard-4}" \
  "${params[@]}"
