import { MetricsService } from '../../../src/platform/metrics/metrics.service';
import { signIn, tokenRequest } from '../../support/management-flow';
import { startTestApp, type TestApp } from '../../support/test-app';

describe('Prometheus metrics on their own port', () => {
  let t: TestApp;
  let metricsUrl: string;
  beforeAll(async () => {
    t = await startTestApp({ METRICS_PORT: '0', RATE_LIMIT_MGMT_IP: '1000/60' });
    metricsUrl = `http://127.0.0.1:${t.app.get(MetricsService).port}/metrics`;
  });
  afterAll(async () => {
    await t.close();
  });

  const scrape = async (): Promise<string> => (await fetch(metricsUrl)).text();
  const value = (text: string, series: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(series));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('counts requests by route pattern, tokens issued and refresh replays', async () => {
    const tokens = await signIn(t, 'metrics@studio.example');
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(200);
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(400);
    await t.auth().get('/management-auth/nothing/here').expect(404);
    const text = await scrape();
    expect(value(text, 'svc_tokens_issued_total{realm="control_plane",grant="authorization_code"}')).toBe(1);
    expect(value(text, 'svc_tokens_issued_total{realm="control_plane",grant="refresh_token"}')).toBe(1);
    expect(value(text, 'svc_refresh_replays_total{realm="control_plane",kind="refresh_token"}')).toBe(1);
    expect(value(text, 'svc_http_requests_total{route="/management-auth/token",method="POST",status="200"}')).toBe(2);
    expect(text).toContain('svc_http_request_duration_seconds_bucket{le="0.005",route="/management-auth/token"');
    // Unmatched paths never become label values.
    expect(text).not.toContain('nothing/here');
    expect(text).toContain('process_resident_memory_bytes');
  });

  it('is not served on the public port', async () => {
    await t.auth().get('/metrics').expect(404);
    await t.console().get('/metrics').expect(404);
  });
});
