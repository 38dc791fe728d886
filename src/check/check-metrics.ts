/** The metrics `check --prometheus FILE` writes for node_exporter's textfile collector (docs/check.md). */
import fs from 'node:fs';
import { writeMetricsText } from './metrics-target.js';
import { type MetricFamily, renderExposition } from './prometheus.js';
import { STATUSES } from './status.js';
import type { CheckResult, Metrics, Status } from './types.js';

export interface MetricsInput {
  status: Status;
  checks: readonly CheckResult[];
  metrics: Metrics;
  durationMs: number;
  /** ms since the epoch, when the check ran. */
  at: number;
}

const gauge = (name: string, help: string, samples: MetricFamily['samples']): MetricFamily => ({
  name,
  help,
  type: 'gauge',
  samples,
});
const one = (value: number | boolean | undefined): MetricFamily['samples'] =>
  value === undefined ? [] : [{ value: Number(value) }];

export function checkMetrics(r: MetricsInput): MetricFamily[] {
  return [
    gauge('agyctl_check_ok', '1 if the last agyctl check passed (exit 0), else 0.', one(r.status === 'ok')),
    gauge(
      'agyctl_check_status',
      'Outcome of the last agyctl check: 1 for its status, 0 for the others.',
      STATUSES.map((s) => ({ labels: { status: s }, value: Number(s === r.status) })),
    ),
    gauge(
      'agyctl_check_duration_seconds',
      'How long each check of the last run took.',
      r.checks.map((c) => ({ labels: { check: c.id }, value: c.ms / 1000 })),
    ),
    gauge(
      'agyctl_check_passed',
      '1 if the check passed in the last run, else 0.',
      r.checks.map((c) => ({ labels: { check: c.id, severity: c.severity }, value: Number(c.ok) })),
    ),
    gauge('agyctl_check_run_duration_seconds', 'Wall time of the whole last check run.', one(r.durationMs / 1000)),
    gauge(
      'agyctl_token_file_mode_ok',
      '1 if acp_token.json has mode 0600, else 0 (absent without a token file).',
      one(r.metrics.tokenModeOk),
    ),
    gauge(
      'agyctl_token_file_age_seconds',
      'Deprecated, use time() - agyctl_token_file_mtime_timestamp_seconds: seconds since acp_token.json was last written, at the time of the run.',
      one(r.metrics.tokenAgeS),
    ),
    gauge(
      'agyctl_token_file_mtime_timestamp_seconds',
      'Unix time acp_token.json was last written (absent without a token file).',
      one(r.metrics.tokenWrittenS),
    ),
    gauge(
      'agyctl_token_fields_known',
      '1 if acp_token.json holds a field agyctl recognises (access or refresh token, expiry), else 0: the refresh-token gauge is then absent, not 0.',
      one(r.metrics.tokenFieldsKnown),
    ),
    gauge(
      'agyctl_token_refresh_token_present',
      '1 if acp_token.json holds a refresh token, else 0 (absent without a token file or when its fields are not ones agyctl knows).',
      one(r.metrics.tokenRefresh),
    ),
    gauge(
      'agyctl_token_expiry_timestamp_seconds',
      'Unix time the access token in acp_token.json expires (absent when the file does not record it).',
      one(r.metrics.tokenExpiryS),
    ),
    gauge(
      'agyctl_credentials_elsewhere',
      '1 if the live check got a session while the token file is missing or unusable (credentials kept elsewhere, e.g. the OS keyring), else 0; absent without --live.',
      one(r.metrics.credentialsElsewhere),
    ),
    gauge(
      'agyctl_server_start_seconds',
      'Server spawn to initialize answer in the last live check.',
      one(r.metrics.serverStartS),
    ),
    gauge(
      'agyctl_check_last_run_timestamp_seconds',
      'Unix time of the last agyctl check run.',
      one(Math.round(r.at / 1000)),
    ),
    gauge(
      'agyctl_last_check_timestamp_seconds',
      'Deprecated, use agyctl_check_last_run_timestamp_seconds (same value).',
      one(Math.round(r.at / 1000)),
    ),
  ];
}

/**
 * Atomic, so the collector never reads half a file; new files are world-readable like other .prom files.
 * Run as a state dir's owner for root (`relay`), the text goes to root's side, which writes the file.
 */
export function writeMetricsFile(file: string, input: MetricsInput, relay?: number): void {
  const text = renderExposition(checkMetrics(input));
  if (relay === undefined) {
    writeMetricsText(file, text);
    return;
  }
  fs.writeSync(relay, text);
  fs.closeSync(relay);
}
