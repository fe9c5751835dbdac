import { describe, expect, it } from 'vitest';
import { nominatimAddress, peliasAddress, photonAddress, ProviderAnswerError } from './provider-answers.ts';

describe('nominatimAddress', () => {
  it('reads display_name', () => {
    expect(nominatimAddress({ place_id: 1, display_name: 'Zócalo, Centro, Cuauhtémoc, Ciudad de México, 06000, México', address: { country_code: 'mx' } })).toBe(
      'Zócalo, Centro, Cuauhtémoc, Ciudad de México, 06000, México',
    );
  });
  it('answers null for its "Unable to geocode" error', () => {
    expect(nominatimAddress({ error: 'Unable to geocode' })).toBeNull();
  });
  it.each([[[]], ['text'], [{ place_id: 1 }], [{ display_name: '  ' }]])('refuses %j', (body) => {
    expect(() => nominatimAddress(body)).toThrow(ProviderAnswerError);
  });
});

const photon = (properties: Record<string, unknown>) => ({
  type: 'FeatureCollection',
  features: [{ type: 'Feature', geometry: { type: 'Point', coordinates: [-99.1332, 19.4326] }, properties }],
});

describe('photonAddress', () => {
  it('puts name, street and number, city, state and country together', () => {
    expect(photonAddress(photon({ name: 'Palacio Nacional', street: 'Plaza de la Constitución', housenumber: '1', city: 'Ciudad de México', state: 'Ciudad de México', country: 'México', countrycode: 'MX' }))).toBe(
      'Palacio Nacional, Plaza de la Constitución 1, Ciudad de México, México',
    );
  });
  it('leaves out what the feature lacks', () => {
    expect(photonAddress(photon({ street: 'Avenida Juárez', city: 'Ciudad de México', country: 'México' }))).toBe('Avenida Juárez, Ciudad de México, México');
  });
  it('answers null for no feature, or a feature with nothing to say', () => {
    expect(photonAddress({ type: 'FeatureCollection', features: [] })).toBeNull();
    expect(photonAddress(photon({ osm_id: 1 }))).toBeNull();
  });
  it.each([[{}], [{ features: [{ type: 'Feature' }] }], [null]])('refuses %j', (body) => {
    expect(() => photonAddress(body)).toThrow(ProviderAnswerError);
  });
});

describe('peliasAddress', () => {
  it("reads the first feature's label", () => {
    const body = {
      geocoding: { version: '0.2' },
      type: 'FeatureCollection',
      features: [
        { type: 'Feature', geometry: { type: 'Point', coordinates: [2.2945, 48.8584] }, properties: { label: 'Tour Eiffel, Paris, France' } },
        { type: 'Feature', geometry: { type: 'Point', coordinates: [2.29, 48.85] }, properties: { label: 'Champ de Mars, Paris, France' } },
      ],
    };
    expect(peliasAddress(body)).toBe('Tour Eiffel, Paris, France');
  });
  it('answers null for no feature', () => {
    expect(peliasAddress({ type: 'FeatureCollection', features: [] })).toBeNull();
  });
  it('refuses a feature without a label', () => {
    expect(() => peliasAddress({ features: [{ properties: { name: 'x' } }] })).toThrow(ProviderAnswerError);
  });
});
