#!/usr/bin/env bash
# The entry of the GitHub Action (action.yml): runs `kernelab gate`, writes its exit status to
# $GITHUB_OUTPUT (`exit-status`), and posts or updates the pull request's one comment: the
# comment whose body starts with the marker `<!-- kernelab-gate -->` is updated, else one is
# created (with `gh api`). It exits 0 itself; the action's last step exits with the status,
# after the evidence bundle is kept.
#
# Environment: RUNNER_TEMP, GITHUB_OUTPUT, GITHUB_REPOSITORY (set by GitHub); GATE_CONFIG,
# GATE_BASE, GATE_HEAD (default HEAD), GATE_COMMENT (default true), PR (the pull request's
# number; no comment without it), KERNELAB (default: kernelab on PATH).
set -u
marker='<!-- kernelab-gate -->'
comment="${RUNNER_TEMP:?}/kernelab-gate-comment.md"
bundle="$RUNNER_TEMP/kernelab-gate-bundle"
args=(gate --head "${GATE_HEAD:-HEAD}" --comment "$comment" --force --record "$bundle")
if [ -n "${GATE_CONFIG:-}" ]; then args+=(--config "$GATE_CONFIG"); fi
if [ -n "${GATE_BASE:-}" ]; then args+=(--base "$GATE_BASE"); fi
"${KERNELAB:-kernelab}" "${args[@]}"
status=$?
echo "exit-status=$status" >> "${GITHUB_OUTPUT:?}"
if [ "${GATE_COMMENT:-true}" = true ] && [ -n "${PR:-}" ] && [ -f "$comment" ]; then
  id=$(gh api --paginate "repos/$GITHUB_REPOSITORY/issues/$PR/comments" \
    --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)
  if [ -n "$id" ]; then
    gh api --method PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$comment" > /dev/null \
      || echo "::warning title=kernelab gate::could not update the pull request comment $id"
  else
    gh api --method POST "repos/$GITHUB_REPOSITORY/issues/$PR/comments" -F "body=@$comment" > /dev/null \
      || echo "::warning title=kernelab gate::could not post the pull request comment"
  fi
fi
exit 0
