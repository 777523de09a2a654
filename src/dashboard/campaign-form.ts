import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';

/** As POST /api/campaigns takes. */
export const MAX_CAMPAIGN_BYTES = 5 * 1024 * 1024;

/** The New campaign form as sent: each text pasted, or its file's when one was chosen. */
export interface CampaignForm {
  definition: string;
  /** Empty when none was given (the definition may hold its contacts). */
  contacts: string;
  /** What could not be taken: a part too large, a form that is not one. */
  problems: string[];
}

/**
 * Reads the form (multipart: two texts, two files) as it streams in, each part at most
 * MAX_CAMPAIGN_BYTES, the whole at most twice that; never more is held.
 */
export function readCampaignForm(req: IncomingMessage): Promise<CampaignForm> {
  return new Promise((resolve) => {
    const texts: Record<string, string> = {};
    const files: Record<string, string> = {};
    const problems: string[] = [];
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: { fields: 4, files: 2, parts: 6, fieldSize: MAX_CAMPAIGN_BYTES, fileSize: MAX_CAMPAIGN_BYTES },
      });
    } catch {
      resolve({ definition: '', contacts: '', problems: ['the form was not sent as a form with files (multipart/form-data)'] });
      return;
    }
    const tooLarge = (what: string): void => {
      problems.push(`${what} is larger than ${MAX_CAMPAIGN_BYTES / 1024 / 1024} MB: split the list into several campaigns`);
    };
    parser.on('field', (name, value, info) => {
      if (name !== 'definition' && name !== 'contacts') return;
      if (info.valueTruncated) tooLarge(name === 'definition' ? 'the definition' : 'the contacts');
      else texts[name] = value;
    });
    let openFiles = 0;
    let parsed = false;
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      openFiles += 1;
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => tooLarge(`the file ${info.filename}`));
      stream.on('close', () => {
        openFiles -= 1;
        // No file chosen comes as an empty part without a name.
        if ((name === 'definition_file' || name === 'contacts_file') && !stream.truncated && chunks.length > 0) {
          files[name] = Buffer.concat(chunks).toString('utf8').replace(/^\uFEFF/, '');
        }
        if (parsed && openFiles === 0) finish();
      });
    });
    parser.on('partsLimit', () => problems.push('the form has more parts than it should'));
    parser.on('error', (error: unknown) => {
      problems.push(`the form could not be read (${error instanceof Error ? error.message : String(error)})`);
      req.unpipe(parser);
      req.resume();
      finish();
    });
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      resolve({
        definition: files.definition_file ?? texts.definition ?? '',
        contacts: files.contacts_file ?? texts.contacts ?? '',
        problems,
      });
    };
    parser.on('close', () => {
      parsed = true;
      if (openFiles === 0) finish();
    });
    req.pipe(parser);
  });
}
