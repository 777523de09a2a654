/** Documents of a small shop the knowledge tests index: a Markdown page of two sections, and an FAQ of two entries. */

export const DELIVERY = `# Delivery

## Delivery areas
We deliver within Berlin and to Potsdam. Delivery costs 4.90 euros, free from 50 euros.

## Delivery days
Deliveries go out Monday to Friday.
`;

export const FAQ = `questions:
  - question: How long does a refund take?
    answer: Refunds reach your account within 5 business days.
  - question: Do you ship abroad?
    answer: No, we only deliver within Germany.
`;
