/**
 * Open-Meteo reports weather as a WMO 4677 "present weather" code (0–99). Agents need words, so this maps every
 * code Open-Meteo documents to its documented text, and any other 0–99 code to the name of its WMO group.
 */

/** The codes Open-Meteo documents (https://open-meteo.com/en/docs, "WMO Weather interpretation codes"). */
export const WMO_CODES: Readonly<Record<number, string>> = {
  0: 'Clear sky',
  1: 'Mainly clear',
  2: 'Partly cloudy',
  3: 'Overcast',
  45: 'Fog',
  48: 'Depositing rime fog',
  51: 'Light drizzle',
  53: 'Moderate drizzle',
  55: 'Dense drizzle',
  56: 'Light freezing drizzle',
  57: 'Dense freezing drizzle',
  61: 'Slight rain',
  63: 'Moderate rain',
  65: 'Heavy rain',
  66: 'Light freezing rain',
  67: 'Heavy freezing rain',
  71: 'Slight snowfall',
  73: 'Moderate snowfall',
  75: 'Heavy snowfall',
  77: 'Snow grains',
  80: 'Slight rain showers',
  81: 'Moderate rain showers',
  82: 'Violent rain showers',
  85: 'Slight snow showers',
  86: 'Heavy snow showers',
  95: 'Slight or moderate thunderstorm',
  96: 'Thunderstorm with slight hail',
  99: 'Thunderstorm with heavy hail',
};

/** WMO 4677 groups, for codes Open-Meteo does not document: [first, last, text]. */
const WMO_GROUPS: ReadonlyArray<readonly [number, number, string]> = [
  [0, 3, 'Cloud cover changing'],
  [4, 9, 'Haze, dust or smoke'],
  [10, 12, 'Mist'],
  [13, 19, 'Lightning, squalls or precipitation in sight'],
  [20, 29, 'Recent precipitation, fog or thunderstorm'],
  [30, 39, 'Dust storm, sandstorm or blowing snow'],
  [40, 49, 'Fog'],
  [50, 59, 'Drizzle'],
  [60, 69, 'Rain'],
  [70, 79, 'Snow'],
  [80, 90, 'Showers'],
  [91, 99, 'Thunderstorm'],
];

/** Text for a WMO weather code, e.g. 3 → "Overcast". */
export function describeWeatherCode(code: number): string {
  const documented = WMO_CODES[code];
  if (documented) return documented;
  const group = WMO_GROUPS.find(([first, last]) => code >= first && code <= last);
  return group ? group[2] : `Unknown weather (WMO code ${code})`;
}
