import { request } from 'undici';

/** An answer as a visitor's browser would get it, body read. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Headers to send; `undefined` leaves out one the visitor would send by default. */
type Headers = Record<string, string | undefined>;

const defined = (headers: Headers): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined)) as Record<string, string>;

/**
 * One visitor of the app over real HTTP (undici): keeps its cookies, and sends what a browser
 * sends with a form post from the app's own page (`Origin`, `Sec-Fetch-Site: same-origin`).
 */
export class Visitor {
  readonly cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  private keep(headers: Record<string, string | string[] | undefined>): void {
    const set = headers['set-cookie'];
    for (const line of typeof set === 'string' ? [set] : (set ?? [])) {
      const [pair = ''] = line.split(';');
      const [name = '', ...value] = pair.split('=');
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value.join('='));
    }
  }

  private cookieHeader(): Headers {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
  }

  /** A GET, without following redirects. */
  async get(path: string, headers: Headers = {}): Promise<Answer> {
    const answer = await request(`${this.base}${path}`, { headers: defined({ accept: 'text/html', ...this.cookieHeader(), ...headers }) });
    this.keep(answer.headers);
    return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
  }

  /** A form post from the app's own page (override `headers` to send it from elsewhere). */
  async post(path: string, form: Record<string, string> = {}, headers: Headers = {}): Promise<Answer> {
    const answer = await request(`${this.base}${path}`, {
      method: 'POST',
      headers: defined({
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'text/html',
        origin: this.base,
        'sec-fetch-site': 'same-origin',
        ...this.cookieHeader(),
        ...headers,
      }),
      body: new URLSearchParams(form).toString(),
    });
    this.keep(answer.headers);
    return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
  }

  /** Signs in with the stand-in's form; throws unless it lands on the dashboard. */
  async signIn(name: string, business: string): Promise<void> {
    const answer = await this.post('/signin', { name, business });
    if (answer.status !== 303 || answer.headers.location !== '/dashboard') throw new Error(`sign-in failed: ${answer.status}`);
  }

  /** Starts a KYB or KYC verification as the dashboard's button does; the refId the service was given (from the hosted link's token). */
  async startVerification(kind: 'kyb' | 'kyc'): Promise<string> {
    const answer = await this.post(`/verikit/invite/${kind}`);
    if (answer.status !== 303) throw new Error(`invite answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    return refIdOfHostedLink(answer.headers.location as string);
  }
}

/** The refId a hosted link is for: its token's subject (the fake's tokens are JWTs). */
export function refIdOfHostedLink(link: string): string {
  const token = new URL(link).searchParams.get('authToken') ?? '';
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown };
  if (typeof payload.sub !== 'string') throw new Error('the hosted link carries no refId');
  return payload.sub;
}
