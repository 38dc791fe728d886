import { describe, expect, it } from 'vitest';
import { checkMetrics } from '../../src/check/check-metrics.js';
import { escapeLabelValue, formatValue, type MetricFamily, renderExposition } from '../../src/check/prometheus.js';
import { parseExposition } from '../helpers/exposition.js';

describe('Prometheus exposition writer', () => {
  it('writes HELP and TYPE before samples and round-trips escaped label values', () => {
    const nasty = 'back\\slash "quoted"\nnewline';
    const text = renderExposition([
      {
        name: 'x_total',
        help: 'help with \\ and\nnewline',
        type: 'gauge',
        samples: [
          { labels: { path: nasty }, value: 1 },
          { labels: { path: 'plain' }, value: 2.5 },
        ],
      },
    ]);
    const fam = parseExposition(text).get('x_total')!;
    expect(fam.type).toBe('gauge');
    expect(fam.help).toBe('help with \\ and\nnewline');
    expect(fam.samples.map((s) => s.labels.path)).toEqual([nasty, 'plain']);
    expect(text.split('\n').every((l) => !l.includes('"quoted"'))).toBe(true);
  });

  it('formats special floats like Go and ends with a newline', () => {
    expect([NaN, Infinity, -Infinity, 0.25].map(formatValue)).toEqual(['NaN', '+Inf', '-Inf', '0.25']);
    const text = renderExposition([{ name: 'v', help: 'h', type: 'gauge', samples: [{ value: NaN }] }]);
    expect(text.endsWith('\n')).toBe(true);
    expect(Number.isNaN(parseExposition(text).get('v')!.samples[0]!.value)).toBe(true);
  });

  it('refuses bad names, duplicate families and duplicate series', () => {
    const g = (name: string, samples: MetricFamily['samples']): MetricFamily => ({
      name,
      help: 'h',
      type: 'gauge',
      samples,
    });
    expect(() => renderExposition([g('bad-name', [{ value: 1 }])])).toThrow(/metric name/);
    expect(() => renderExposition([g('a', [{ labels: { 'bad-label': 'x' }, value: 1 }])])).toThrow(/label name/);
    expect(() => renderExposition([g('a', [{ value: 1 }]), g('a', [{ value: 2 }])])).toThrow(/duplicate/);
    expect(() =>
      renderExposition([
        g('a', [
          { labels: { k: 'v' }, value: 1 },
          { labels: { k: 'v' }, value: 2 },
        ]),
      ]),
    ).toThrow(/duplicate/);
    expect(escapeLabelValue('a"b')).toBe('a\\"b');
  });

  it('omits families without samples (no dangling HELP/TYPE)', () => {
    const text = renderExposition([{ name: 'empty', help: 'h', type: 'gauge', samples: [] }]);
    expect(text).toBe('');
  });
});

describe('the exposition parser used by these tests can fail', () => {
  it('rejects what node_exporter would reject', () => {
    expect(() => parseExposition('a 1')).toThrow(/newline/);
    expect(() => parseExposition('a{k="v} 1\n')).toThrow(/unterminated/);
    expect(() => parseExposition('a{k="\\x"} 1\n')).toThrow(/escape/);
    expect(() => parseExposition('a 1\nb 2\na 3\n')).toThrow(/again/);
    expect(() => parseExposition('a 1\n# TYPE a gauge\n')).toThrow(/after its samples/);
    expect(() => parseExposition('a one\n')).toThrow(/bad value/);
    expect(() => parseExposition('a 1\na 2\n')).toThrow(/duplicate/);
  });
});

describe('check metrics', () => {
  it('carry every documented metric, one status set to 1', () => {
    const text = renderExposition(
      checkMetrics({
        status: 'misconfigured',
        checks: [
          { id: 'token-file', ok: false, severity: 'error', message: 'm', ms: 3 },
          { id: 'live', ok: true, severity: 'error', message: 'm', ms: 1500 },
        ],
        metrics: {
          tokenModeOk: false,
          tokenAgeS: 42,
          tokenWrittenS: 1_699_999_958,
          tokenFieldsKnown: true,
          serverStartS: 1.25,
          tokenRefresh: true,
          tokenExpiryS: 1_700_003_600,
        },
        durationMs: 1600,
        at: 1_700_000_000_000,
      }),
    );
    const fams = parseExposition(text);
    for (const name of [
      'agyctl_check_ok',
      'agyctl_check_status',
      'agyctl_check_duration_seconds',
      'agyctl_token_file_mode_ok',
      'agyctl_token_file_age_seconds',
      'agyctl_token_refresh_token_present',
      'agyctl_token_expiry_timestamp_seconds',
      'agyctl_server_start_seconds',
      'agyctl_last_check_timestamp_seconds',
      'agyctl_check_last_run_timestamp_seconds',
      'agyctl_token_file_mtime_timestamp_seconds',
      'agyctl_token_fields_known',
    ]) {
      expect(fams.get(name)?.type, name).toBe('gauge');
      expect(fams.get(name)?.help, name).toBeTruthy();
    }
    expect(fams.get('agyctl_check_ok')!.samples[0]!.value).toBe(0);
    const status = fams.get('agyctl_check_status')!.samples;
    expect(status.filter((s) => s.value === 1).map((s) => s.labels.status)).toEqual(['misconfigured']);
    expect(status).toHaveLength(6);
    expect(fams.get('agyctl_check_duration_seconds')!.samples.find((s) => s.labels.check === 'live')!.value).toBe(1.5);
    expect(fams.get('agyctl_token_file_mode_ok')!.samples[0]!.value).toBe(0);
    expect(fams.get('agyctl_check_last_run_timestamp_seconds')!.samples[0]!.value).toBe(1_700_000_000);
    // The deprecated names stay for one version, with the same values and a HELP that names the replacement.
    expect(fams.get('agyctl_last_check_timestamp_seconds')!.samples[0]!.value).toBe(1_700_000_000);
    expect(fams.get('agyctl_last_check_timestamp_seconds')!.help).toMatch(/^Deprecated, use agyctl_check_last_run/);
    expect(fams.get('agyctl_token_file_age_seconds')!.help).toMatch(
      /^Deprecated, use time\(\) - agyctl_token_file_mtime/,
    );
    expect(fams.get('agyctl_token_file_mtime_timestamp_seconds')!.samples[0]!.value).toBe(1_699_999_958);
    expect(fams.get('agyctl_token_fields_known')!.samples[0]!.value).toBe(1);
    expect(fams.get('agyctl_token_refresh_token_present')!.samples[0]!.value).toBe(1);
    expect(fams.get('agyctl_token_expiry_timestamp_seconds')!.samples[0]!.value).toBe(1_700_003_600);
  });

  it('leaves out token and server metrics that were not measured', () => {
    const fams = parseExposition(
      renderExposition(checkMetrics({ status: 'ok', checks: [], metrics: {}, durationMs: 5, at: 0 })),
    );
    expect(fams.has('agyctl_token_file_mode_ok')).toBe(false);
    expect(fams.has('agyctl_server_start_seconds')).toBe(false);
    expect(fams.has('agyctl_token_refresh_token_present')).toBe(false);
    expect(fams.has('agyctl_token_expiry_timestamp_seconds')).toBe(false);
    expect(fams.get('agyctl_check_ok')!.samples[0]!.value).toBe(1);
  });

  it('a token file whose fields agyctl does not know: fields_known 0 and no refresh-token sample', () => {
    const fams = parseExposition(
      renderExposition(
        checkMetrics({
          status: 'ok',
          checks: [],
          metrics: { tokenModeOk: true, tokenFieldsKnown: false },
          durationMs: 5,
          at: 0,
        }),
      ),
    );
    expect(fams.get('agyctl_token_fields_known')!.samples[0]!.value).toBe(0);
    expect(fams.has('agyctl_token_refresh_token_present')).toBe(false);
  });
});
