/**
 * Checks that a file is a WAV clip the voice service can play as it is:
 * it takes base64 of a 16 kHz mono 16-bit PCM WAV file and converts nothing,
 * so anything else would play as noise, or not at all, in the middle of a call.
 */

/**
 * The voice service documents no limit for one audio action; 2 MiB is about
 * 65 s, far more than a chime or a hold line needs, and is read on every reload.
 */
export const MAX_CLIP_BYTES = 2 * 1024 * 1024;

const SAMPLE_RATE = 16_000;
const BYTES_PER_MS = (SAMPLE_RATE * 2) / 1000;

const FIX = 'the voice service plays 16 kHz mono 16-bit PCM WAV (convert: ffmpeg -i in.wav -ar 16000 -ac 1 -c:a pcm_s16le out.wav)';

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
/** KSDATAFORMAT_SUBTYPE_PCM as stored in the file (its first two bytes are the format code, 1). */
const PCM_SUBFORMAT = Buffer.from([1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xaa, 0, 0x38, 0x9b, 0x71]);

const FORMAT_NAMES: Readonly<Record<number, string>> = {
  0x0002: 'ADPCM',
  0x0003: 'floating-point',
  0x0006: 'A-law',
  0x0007: 'µ-law',
  0x0011: 'IMA ADPCM',
  0x0055: 'MP3',
};

export type WavCheck = { ok: true; durationMs: number } | { ok: false; problem: string };

interface Format {
  code: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  pcm: boolean;
}

/** `problem` reads after the file's name: "audio/x.wav is 8000 Hz; the voice service plays …". */
export function checkWav(bytes: Buffer): WavCheck {
  if (bytes.length > MAX_CLIP_BYTES) return fail(tooBig(bytes.length));
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') {
    return fail(`is not a WAV file (it does not start with a RIFF/WAVE header); ${FIX}`);
  }
  let format: Format | undefined;
  let data: { start: number; size: number } | undefined;
  let at = 12;
  while (at + 8 <= bytes.length && (format === undefined || data === undefined)) {
    const id = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    const start = at + 8;
    if (id === 'fmt ') {
      if (size < 16 || start + size > bytes.length) return fail(truncated('its format chunk'));
      format = readFormat(bytes.subarray(start, start + size));
    } else if (id === 'data') {
      data = { start, size };
      // A data chunk that claims more than the file holds has nothing readable after it.
      if (start + size > bytes.length) break;
    }
    // Chunks are padded to an even length.
    at = start + size + (size % 2);
  }
  // Chunks that run past the end, or a chunk header cut short: the file was cut, not made without the chunk.
  // (A missing pad byte after the last chunk is common and harmless.)
  const cutShort = data === undefined && (at < bytes.length || at > bytes.length + 1);
  if (cutShort) return fail(truncated('it ends in the middle of a chunk'));
  if (format === undefined) return fail(`has no format chunk, so nothing says how to play it; ${FIX}`);
  const wrong = describeMismatch(format);
  if (wrong !== undefined) return fail(`${wrong}; ${FIX}`);
  if (data === undefined) return fail('has no data chunk, so there is no audio in it; export it again');
  const available = bytes.length - data.start;
  if (data.size > available) {
    return fail(truncated(`its data chunk announces ${data.size} bytes but only ${available} follow`));
  }
  if (data.size === 0) return fail('has no audio (its data chunk is empty); export it again');
  return { ok: true, durationMs: Math.round(data.size / BYTES_PER_MS) };
}

export function tooBig(size: number): string {
  return `is ${size} bytes; a clip may be at most 2 MiB (${MAX_CLIP_BYTES} bytes, about 65 s of 16 kHz mono 16-bit audio): shorten it`;
}

function readFormat(fmt: Buffer): Format {
  const code = fmt.readUInt16LE(0);
  const extensiblePcm =
    code === WAVE_FORMAT_EXTENSIBLE && fmt.length >= 40 && fmt.subarray(24, 40).equals(PCM_SUBFORMAT);
  return {
    code,
    channels: fmt.readUInt16LE(2),
    sampleRate: fmt.readUInt32LE(4),
    bitsPerSample: fmt.readUInt16LE(14),
    pcm: code === WAVE_FORMAT_PCM || extensiblePcm,
  };
}

/** Only what differs from 16 kHz mono 16-bit PCM, the way an audio tool would name it ("44100 Hz stereo"). */
function describeMismatch(format: Format): string | undefined {
  if (!format.pcm) {
    const name = FORMAT_NAMES[format.code] ?? `format 0x${format.code.toString(16).padStart(4, '0')}`;
    return `is ${name} audio, not PCM`;
  }
  const parts: string[] = [];
  if (format.sampleRate !== SAMPLE_RATE) parts.push(`${format.sampleRate} Hz`);
  if (format.channels !== 1) parts.push(format.channels === 2 ? 'stereo' : `${format.channels} channels`);
  if (format.bitsPerSample !== 16) parts.push(`${format.bitsPerSample}-bit`);
  return parts.length > 0 ? `is ${parts.join(' ')}` : undefined;
}

function truncated(what: string): string {
  return `is truncated (${what}); export or copy it again`;
}

function fail(problem: string): WavCheck {
  return { ok: false, problem };
}
