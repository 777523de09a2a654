// A receiver of Hotline's call reports, for trying REPORT_WEBHOOK_URL on one machine and as a start
// for your own: it checks each report's signature as docs/reports.md describes, answers 204, and
// prints one line per report. Plain Node, no packages:
//
//   REPORT_WEBHOOK_SECRET=… node examples/report-receiver.mjs        (PORT, default 4500)
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const secret = process.env.REPORT_WEBHOOK_SECRET;
if (!secret) {
  console.error('set REPORT_WEBHOOK_SECRET to the value Hotline signs its reports with');
  process.exit(2);
}
const port = Number(process.env.PORT ?? 4500);
/** A report is retried until it is answered 2xx; each delivery id is printed once. */
const seen = new Set();

/** The signature of `body` at `timestamp`, as Hotline makes it, compared in constant time; at most 5 minutes old. */
function signedByHotline(timestamp, body, signature) {
  if (!/^\d{1,15}$/.test(timestamp ?? '') || Math.abs(Date.now() - Number(timestamp) * 1000) > 5 * 60 * 1000) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest();
  const given = Buffer.from(/^sha256=([0-9a-f]{64})$/i.exec(signature ?? '')?.[1] ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    // The signature is over the bytes as sent: check it before parsing anything.
    const body = Buffer.concat(chunks).toString('utf8');
    if (!signedByHotline(request.headers['x-hotline-timestamp'], body, request.headers['x-hotline-signature'])) {
      console.log(`refused a request without a valid signature (${request.method} ${request.url})`);
      response.writeHead(401).end();
      return;
    }
    const delivery = request.headers['x-hotline-delivery'];
    if (!seen.has(delivery)) {
      seen.add(delivery);
      const report = JSON.parse(body);
      const seconds = Math.round(report.duration_ms / 1000);
      console.log(`report of ${report.direction} call ${report.session_id}: ${report.end_reason} after ${seconds} s, ${report.turns.count} turn${report.turns.count === 1 ? '' : 's'}`);
      console.log(`  summary: ${report.summary ?? '(none)'}`);
      console.log(`  fields: ${JSON.stringify(report.fields)}`);
    }
    response.writeHead(204).end();
  });
}).listen(port, () => console.log(`receiving reports on http://localhost:${port}/reports`));
