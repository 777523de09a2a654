import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatRequestBody, ScriptedReply } from '../src/llm/scripted-server.js';
import { FakeVoiceService } from '../src/testing/voice-service-client.js';

/** Every reply's last sentence: the caller's cue that Hotline has said its piece. */
const CUE = 'Anything else?';
/** The turn of each call that asks about an order, so the shipped order_status tool runs once per call. */
const ORDER_TURN = 2;

/**
 * The model of the soak: a short answer to every question, the order tool
 * where the caller asks about an order, and report.md's fields as JSON for
 * the report of every call — so every ended call also passes through the
 * report's model request, its storage and its webhook delivery.
 */
export function soakScript(request: ChatRequestBody): ScriptedReply {
  if (request.stream !== true) {
    return {
      // The soak measures memory, not the model: reports come as fast as calls end.
      ttftMs: 1,
      tokenDelayMs: 0,
      content: JSON.stringify({
        summary: 'A caller asked about the opening hours and an order; both were answered.',
        callback_wanted: false,
        customer_number: '4711',
        sentiment: 'neutral',
        resolved: true,
      }),
    };
  }
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { content: `It has shipped and arrives tomorrow. ${CUE}` };
  const text = last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
  const canLookUp = request.tools?.some((tool) => tool.function.name === 'order_status') ?? false;
  if (canLookUp && /\border\b/i.test(text)) return { toolCalls: [{ name: 'order_status', arguments: '{"order_number":"4711"}' }] };
  return { content: `Sure, I can help with that. Our hours are nine to six. ${CUE}` };
}

export interface ChurnOptions {
  wsUrl: string;
  /** Calls in progress at once: each ended call is replaced by a new one. */
  concurrency: number;
  /** Caller turns per call before the caller hangs up. */
  turns: number;
  /** Asked before each new call: false ends the load once the calls in progress have ended. */
  goOn: () => boolean;
  /** Told of each call that ended, and whether the caller heard the order tool's answer. */
  ended: (lookedUp: boolean) => void;
  /** Told of a call that failed (the load goes on with the next). */
  failed: (error: unknown) => void;
}

/**
 * The churning load: `concurrency` callers, each greeted, asking `turns`
 * questions (one about an order), hanging up, and the next call in its
 * place — the load under which a phone line runs for months.
 */
export async function churn(options: ChurnOptions): Promise<void> {
  const caller = async (lane: number): Promise<void> => {
    // Staggered, so the calls do not all start and end in step.
    await sleep(lane * 20);
    while (options.goOn()) {
      try {
        options.ended(await oneCall(options.wsUrl, options.turns, lane));
      } catch (error) {
        options.failed(error);
        await sleep(200);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, lane) => caller(lane)));
}

/** A call that stays for the whole run (the soak's --hold mode): questions with pauses until `goOn` says stop. */
export async function holdCall(wsUrl: string, lane: number, goOn: () => boolean, turned: () => void): Promise<void> {
  await sleep(Math.random() * 2000);
  const service = await FakeVoiceService.connect(wsUrl, { playback: { kind: 'auto', msPerChar: 1 } });
  service.start();
  await service.nextOfType('speak');
  for (let turn = 0; goOn(); turn++) {
    service.say(`question ${turn} from caller ${lane}`, { bargedIn: Math.random() < 0.1 });
    await service.next((a) => a.type === 'speak' && a.text === CUE);
    turned();
    await sleep(500 + Math.random() * 2000);
  }
  service.end('soak_over');
  await service.close();
}

/** One call; true when the caller heard the order tool's answer. */
async function oneCall(wsUrl: string, turns: number, lane: number): Promise<boolean> {
  const service = await FakeVoiceService.connect(wsUrl, { playback: { kind: 'auto', msPerChar: 0 } });
  try {
    service.start();
    await service.nextOfType('speak');
    for (let turn = 0; turn < turns; turn++) {
      service.say(turn === Math.min(ORDER_TURN, turns - 1) ? 'Where is my order 4711?' : `question ${turn} on line ${lane}`);
      await service.next((a) => a.type === 'speak' && typeof a.text === 'string' && a.text.endsWith(CUE));
    }
    service.end('hangup');
    return service.actions.some((action) => action.type === 'speak' && action.text?.startsWith('It has shipped') === true);
  } finally {
    await service.close();
  }
}
