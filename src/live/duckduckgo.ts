/**
 * Reference answers from the DuckDuckGo Instant Answer API (keyless; not web search, so often empty):
 * the abstract and the related topics, as search results. DDG labels its JSON `application/x-javascript`,
 * which does not matter because the shared client parses by body.
 */
import { z } from 'zod';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { cleanText, httpUrl } from './text.js';

export const DUCKDUCKGO: Upstream = { id: 'duckduckgo', name: 'DuckDuckGo', kind: 'search' };

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

const topicSchema = z.object({ Text: z.string().optional(), FirstURL: z.string().optional() });
const groupSchema = z.object({ Name: z.string().optional(), Topics: z.array(topicSchema) });

const answerSchema = z.object({
  Heading: z.string().default(''),
  AbstractText: z.string().default(''),
  AbstractURL: z.string().default(''),
  RelatedTopics: z.array(z.union([groupSchema, topicSchema])),
});

function topicResult(topic: z.infer<typeof topicSchema>): SearchResult | undefined {
  const url = httpUrl(topic.FirstURL);
  const text = cleanText(topic.Text ?? '');
  if (!url || !text) return undefined;
  const dash = text.indexOf(' - ');
  return { title: dash > 0 ? text.slice(0, dash) : text, url: url.href, snippet: text };
}

export async function searchDuckDuckGo(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<SearchResult[]> {
  const url = buildUrl(baseUrl(config, 'duckduckgo', DUCKDUCKGO), '/', {
    q: query,
    format: 'json',
    no_html: '1',
    skip_disambig: '1',
    t: 'agent-context',
  });
  const answer = await http.getJson(DUCKDUCKGO, url, answerSchema, { deadline });
  const results: SearchResult[] = [];
  const abstractUrl = httpUrl(answer.AbstractURL);
  if (abstractUrl) {
    results.push({
      title: cleanText(answer.Heading) || abstractUrl.href,
      url: abstractUrl.href,
      snippet: cleanText(answer.AbstractText),
    });
  }
  for (const entry of answer.RelatedTopics) {
    const topics = 'Topics' in entry ? entry.Topics : [entry];
    for (const topic of topics) {
      const result = topicResult(topic);
      if (result) results.push(result);
    }
  }
  return results;
}
