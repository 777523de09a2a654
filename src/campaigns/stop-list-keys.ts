import type { Logger } from '../logger.js';
import { phoneKey } from '../phone/phone-number.js';
import type { CampaignStore } from './definition.js';

/** Every row of the global stop list in the form numbers are compared in (rows from before normalisation). */
export async function normaliseStopList(repository: Pick<CampaignStore, 'normaliseStopList'>, defaultCountryCode: string | undefined, log: Logger): Promise<void> {
  const kept = await repository.normaliseStopList((number) => {
    const key = phoneKey(number, { defaultCountryCode });
    return /^[1-9]\d{7,14}$/.test(key) ? key : undefined;
  });
  if (kept.length > 0) {
    log.warn(
      { numbers: kept.length, defaultCountryCode: defaultCountryCode ?? null },
      'stop list rows that are not phone numbers Hotline can read (a national number needs DEFAULT_COUNTRY_CODE): they stop nothing until corrected',
    );
  }
}
