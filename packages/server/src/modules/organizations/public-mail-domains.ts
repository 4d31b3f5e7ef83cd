/**
 * Mail domains where anyone can open a mailbox. An organization that "verifies" one would make SSO
 * answer for millions of strangers' addresses, so no organization may claim them (422
 * `domain_not_allowed`). Not exhaustive: the providers most addresses come from, in the regions
 * the service's users are in. A domain under one of these (`mail.gmail.com`) is refused too.
 */
const PUBLIC_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  // Google, Microsoft, Yahoo, Apple, AOL
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'outlook.fr',
  'outlook.de',
  'hotmail.com',
  'hotmail.co.uk',
  'hotmail.fr',
  'hotmail.de',
  'hotmail.it',
  'hotmail.es',
  'live.com',
  'live.co.uk',
  'live.fr',
  'live.de',
  'msn.com',
  'passport.com',
  'yahoo.com',
  'yahoo.co.uk',
  'yahoo.co.jp',
  'yahoo.fr',
  'yahoo.de',
  'yahoo.it',
  'yahoo.es',
  'ymail.com',
  'rocketmail.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'aim.com',
  // Privacy-minded and independent providers
  'proton.me',
  'protonmail.com',
  'protonmail.ch',
  'pm.me',
  'tutanota.com',
  'tutanota.de',
  'tuta.io',
  'tuta.com',
  'fastmail.com',
  'fastmail.fm',
  'hey.com',
  'zoho.com',
  'zohomail.com',
  'mail.com',
  'email.com',
  'hushmail.com',
  'mailbox.org',
  'posteo.de',
  'posteo.net',
  // Europe
  'web.de',
  't-online.de',
  'freenet.de',
  'orange.fr',
  'wanadoo.fr',
  'free.fr',
  'laposte.net',
  'sfr.fr',
  'libero.it',
  'virgilio.it',
  'btinternet.com',
  'sky.com',
  'seznam.cz',
  'wp.pl',
  'o2.pl',
  'interia.pl',
  'onet.pl',
  // Russia and neighbours
  'mail.ru',
  'inbox.ru',
  'list.ru',
  'bk.ru',
  'yandex.ru',
  'yandex.com',
  'ya.ru',
  'rambler.ru',
  'ukr.net',
  // Asia
  'qq.com',
  'foxmail.com',
  '163.com',
  '126.com',
  'yeah.net',
  'sina.com',
  'sina.cn',
  'sohu.com',
  'aliyun.com',
  'naver.com',
  'daum.net',
  'hanmail.net',
  'rediffmail.com',
  // The Americas
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'bellsouth.net',
  'cox.net',
  'charter.net',
  'earthlink.net',
  'optonline.net',
  'uol.com.br',
  'bol.com.br',
  'terra.com.br',
]);

/** GMX has a mailbox domain in many countries (gmx.de, gmx.net, gmx.at, gmx.com, …): all of them. */
const PUBLIC_MAIL_FAMILIES: readonly RegExp[] = [/^gmx\.[a-z]{2,6}(\.[a-z]{2})?$/];

/** True when `domain` (normalised: lower case, ASCII) is, or is under, a public mail domain. */
export function isPublicMailDomain(domain: string): boolean {
  const labels = domain.split('.');
  for (let start = 0; start < labels.length - 1; start += 1) {
    const suffix = labels.slice(start).join('.');
    if (PUBLIC_MAIL_DOMAINS.has(suffix) || PUBLIC_MAIL_FAMILIES.some((family) => family.test(suffix))) return true;
  }
  return false;
}
