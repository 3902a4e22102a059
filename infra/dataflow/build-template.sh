#!/usr/bin/env bash
# Builds the bowline Flex Template: the flex-template image of
# infra/Dockerfile, pushed to Artifact Registry, and the template spec
# (image + metadata.json) written to Cloud Storage. The template runs one
# bowline run into --output; the nightly reindex cannot run as a template
# (infra/README.md).
#
#   PROJECT=my-project REGION=europe-west1 REPOSITORY=bowline TEMPLATE_BUCKET=my-templates \
#     infra/dataflow/build-template.sh
#
# Environment:
#   PROJECT, REGION, REPOSITORY  the Artifact Registry Docker repository
#                                REGION-docker.pkg.dev/PROJECT/REPOSITORY (required)
#   TEMPLATE_BUCKET              bucket of the spec, gs://TEMPLATE_BUCKET/templates/bowline.json (required)
#   TAG                          image tag (default: the git commit, short)
#   BUILDER                      docker (default: build and push here) or cloudbuild (gcloud builds submit)
#   PRINT_ONLY=1                 build nothing, print the template spec gcloud would write
set -euo pipefail

: "${PROJECT:?set PROJECT to the Google Cloud project}"
: "${REGION:?set REGION, e.g. europe-west1}"
: "${REPOSITORY:?set REPOSITORY to the Artifact Registry Docker repository}"
: "${TEMPLATE_BUCKET:?set TEMPLATE_BUCKET to the bucket that holds the template spec}"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tag=${TAG:-$(git -C "$root" rev-parse --short HEAD)}
image="$REGION-docker.pkg.dev/$PROJECT/$REPOSITORY/bowline-flex:$tag"
template="gs://$TEMPLATE_BUCKET/templates/bowline.json"

if [[ "${PRINT_ONLY:-}" == 1 ]]; then
  exec gcloud dataflow flex-template build "$template" --project "$PROJECT" \
    --image "$image" --sdk-language GO --metadata-file "$here/metadata.json" --print-only
fi

case "${BUILDER:-docker}" in
docker)
  DOCKER_BUILDKIT=1 docker build -f "$root/infra/Dockerfile" --target flex-template -t "$image" "$root"
  docker push "$image"
  ;;
cloudbuild)
  config=$(mktemp)
  trap 'rm -f "$config"' EXIT
  cat >"$config" <<YAML
steps:
  - name: gcr.io/cloud-builders/docker
    env: [DOCKER_BUILDKIT=1]
    args: [build, -f, infra/Dockerfile, --target, flex-template, -t, "$image", .]
images: ["$image"]
YAML
  gcloud builds submit "$root" --project "$PROJECT" --region "$REGION" --config "$config"
  ;;
*)
  echo "build-template.sh: BUILDER must be docker or cloudbuild, not ${BUILDER}" >&2
  exit 2
  ;;
esac

gcloud dataflow flex-template build "$template" --project "$PROJECT" \
  --image "$image" --sdk-language GO --metadata-file "$here/metadata.json"
echo "template: $template"
echo "image:    $image"
